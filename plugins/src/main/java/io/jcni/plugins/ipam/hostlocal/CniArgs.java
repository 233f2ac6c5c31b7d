package io.jcni.plugins.ipam.hostlocal;

import java.util.ArrayList;
import java.util.List;

/**
 * The host-local part of {@code CNI_ARGS} ({@code K=V;K=V}), with the rules of upstream's
 * {@code types.LoadArgs} over {@code IPAMEnvArgs}: known keys are {@code IP} and
 * {@code IgnoreUnknown}; any other key is an error unless {@code IgnoreUnknown} is true.
 *
 * <p>{@code IP} may hold several comma-separated addresses (a jcni extension; a single address
 * behaves exactly as upstream). Each may carry a {@code /prefix}, which is ignored.
 */
final class CniArgs {
    private CniArgs() {}

    static List<IpAddress> requestedIps(String cniArgs) {
        List<IpAddress> ips = new ArrayList<>();
        if (cniArgs == null || cniArgs.isEmpty()) return ips;
        List<String> unknown = new ArrayList<>();
        boolean ignoreUnknown = false;
        for (String pair : cniArgs.split(";", -1)) {
            String[] kv = pair.split("=", -1);
            if (kv.length != 2) throw new IpamException("ARGS: invalid pair \"" + pair + "\"");
            switch (kv[0]) {
                case "IP" -> {
                    if (kv[1].isEmpty()) continue; // an empty ip.IP: nothing requested
                    for (String one : kv[1].split(",", -1)) {
                        try {
                            ips.add(IpamConfig.parseIpArg(one.strip()));
                        } catch (IpamException e) {
                            throw new IpamException("ARGS: error parsing value of pair \"" + pair + "\": "
                                    + e.getMessage(), e);
                        }
                    }
                }
                case "IgnoreUnknown" -> ignoreUnknown = parseBool(pair, kv[1]);
                default -> unknown.add(pair);
            }
        }
        if (!unknown.isEmpty() && !ignoreUnknown) {
            StringBuilder sb = new StringBuilder("ARGS: unknown args [");
            for (int i = 0; i < unknown.size(); i++) {
                if (i > 0) sb.append(' ');
                sb.append('"').append(unknown.get(i)).append('"');
            }
            throw new IpamException(sb.append(']').toString());
        }
        return ips;
    }

    /** Upstream's {@code UnmarshallableBool}: 1/true and 0/false, case-insensitively. */
    private static boolean parseBool(String pair, String v) {
        String s = v.toLowerCase(java.util.Locale.ROOT);
        if (s.equals("1") || s.equals("true")) return true;
        if (s.equals("0") || s.equals("false")) return false;
        throw new IpamException("ARGS: error parsing value of pair \"" + pair
                + "\": boolean unmarshal error: invalid input " + v);
    }
}
