package io.jcni.plugins.ipam.dhcp;

import io.jcni.plugins.ipam.IpamConf;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code dhcp} IPAM plugin's configuration, with the reference's keys:
 * {@code daemonSocketPath}, {@code request} ({@code option}, {@code skipDefault}), {@code provide}
 * ({@code option}, {@code value}, {@code fromArg}); and jcni's {@code timeout} (how long ADD may
 * wait for a server: a Go duration such as "10s", or a number of seconds; default 10 s, the
 * reference daemon's fixed client timeout).
 *
 * @param requested option codes for the parameter request list, in order
 * @param provided  option code to the bytes sent
 */
public record DhcpConf(String socketPath, List<Integer> requested, Map<Integer, byte[]> provided, long timeoutMillis) {

    public static final String DEFAULT_SOCKET = "/run/jcni/dhcp.sock";
    static final long DEFAULT_TIMEOUT_MILLIS = 10_000;
    static final long MAX_TIMEOUT_MILLIS = 300_000;

    /**
     * Asked for unless a {@code request} entry says {@code skipDefault}: subnet mask and routers, as
     * the reference; and, beyond it, what the result also carries: DNS servers, domain name and
     * classless static routes (a server sends only what is asked for).
     */
    static final List<Integer> DEFAULT_REQUEST = List.of(1, 3, 6, 15, 121);

    /** The option names the reference accepts besides numbers (its optionNameToID). */
    private static final Map<String, Integer> NAMES = Map.of(
            "dhcp-client-identifier", 61,
            "subnet-mask", 1,
            "routers", 3,
            "host-name", 12,
            "user-class", 77,
            "vendor-class-identifier", 60);

    public static DhcpConf load(PluginRequest req) {
        return parse(IpamConf.ipam(req.conf()), req.args());
    }

    static DhcpConf parse(Map<String, Object> ipam, CniArgs args) {
        String socket = Fields.string(ipam, "daemonSocketPath", "ipam");
        if (socket == null || socket.isEmpty()) socket = DEFAULT_SOCKET;

        Map<Integer, byte[]> provided = new LinkedHashMap<>();
        List<Object> provide = Fields.list(ipam, "provide", "ipam");
        if (provide != null) {
            for (int i = 0; i < provide.size(); i++) {
                String where = "ipam.provide[" + i + "]";
                Map<String, Object> p = Fields.element(provide.get(i), where);
                String name = Fields.string(p, "option", where);
                int code = code(name);
                String value = Fields.string(p, "value", where);
                if (value != null && !value.isEmpty()) provided.put(code, bytes(value, "value too long for option \"" + name + "\""));
                String fromArg = Fields.string(p, "fromArg", where);
                String argValue = fromArg == null ? null : args.get(fromArg);
                if (argValue != null) {
                    provided.put(code, bytes(argValue, "value too long for option \"" + name + "\" from CNI_ARGS \"" + fromArg + "\""));
                }
            }
        }

        List<Integer> requested = new ArrayList<>();
        boolean skipDefault = false;
        List<Object> request = Fields.list(ipam, "request", "ipam");
        if (request != null) {
            for (int i = 0; i < request.size(); i++) {
                String where = "ipam.request[" + i + "]";
                Map<String, Object> r = Fields.element(request.get(i), where);
                if (Fields.bool(r, "skipDefault", where, false)) skipDefault = true;
                String name = Fields.string(r, "option", where);
                if (name == null) continue; // an entry that only says skipDefault
                int code = code(name);
                if (!requested.contains(code)) requested.add(code);
            }
        }
        if (!skipDefault) for (int c : DEFAULT_REQUEST) if (!requested.contains(c)) requested.add(c);

        return new DhcpConf(socket, List.copyOf(requested), provided, timeout(Fields.value(ipam, "timeout")));
    }

    static int code(String name) {
        if (name == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Can not parse option \"\": missing option");
        Integer known = NAMES.get(name);
        if (known != null) return known;
        try {
            int c = Integer.parseInt(name);
            if (c >= 0 && c <= 255) return c;
        } catch (NumberFormatException ignored) {
            // the error below
        }
        throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Can not parse option \"" + name + "\"",
                "a number 0-255 or one of " + NAMES.keySet().stream().sorted().toList());
    }

    private static byte[] bytes(String v, String tooLong) {
        byte[] b = v.getBytes(StandardCharsets.UTF_8);
        if (b.length > 255) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, tooLong);
        return b;
    }

    /** "timeout": a Go duration ("500ms", "10s", "1m30s") or a number of seconds; 1 ms to 5 minutes. */
    static long timeout(Object v) {
        if (v == null) return DEFAULT_TIMEOUT_MILLIS;
        long ms;
        if (v instanceof Number n) {
            ms = Math.round(n.doubleValue() * 1000);
        } else if (v instanceof String s) {
            ms = parseDuration(s);
        } else {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "ipam.timeout must be a duration such as \"10s\"");
        }
        if (ms <= 0 || ms > MAX_TIMEOUT_MILLIS) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "ipam.timeout " + v + " is out of range (1ms to 5m)");
        }
        return ms;
    }

    private static long parseDuration(String s) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)").matcher(s);
        double total = 0;
        int pos = 0;
        while (m.find() && m.start() == pos) {
            double n = Double.parseDouble(m.group(1));
            total += switch (m.group(2)) {
                case "ms" -> n;
                case "s" -> n * 1000;
                case "m" -> n * 60_000;
                default -> n * 3_600_000;
            };
            pos = m.end();
        }
        if (pos == 0 || pos != s.length()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "ipam.timeout \"" + s + "\" is not a duration such as \"10s\"");
        }
        return Math.round(total);
    }
}
