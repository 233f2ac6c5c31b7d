package io.jcni.plugins.ipam.hostlocal;

import io.jcni.plugins.ipam.IpamConf;
import io.jcni.types.Cidr;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The host-local view of a network config, loaded like the reference {@code LoadIPAMConfig}
 * (backend/allocator/config.go): same keys, same defaults, same order of checks and messages.
 *
 * <p>IPAM plugins receive the whole network config, so {@code name}, {@code cniVersion},
 * {@code args} and {@code runtimeConfig} come from the top level and the rest from {@code ipam}.
 * Keys are read with {@link Fields}, Go's {@code encoding/json} rules (exact or case-folded match,
 * last key wins); type errors are code 6, naming the field.
 *
 * @param requestedIps addresses asked for by CNI_ARGS {@code IP=}, then {@code args.cni.ips}, then
 *     the {@code ips} capability ({@code runtimeConfig.ips}), in that order, duplicates kept
 * @param dataDir {@code ipam.dataDir} as written, or null; see {@link #effectiveDataDir()}
 */
public record IpamConfig(String name, String cniVersion, String type, List<RangeSet> ranges,
        List<Result.Route> routes, String dataDir, String resolvConf, List<IpAddr> requestedIps) {

    public static final String DEFAULT_DATA_DIR = "/var/lib/cni/networks";

    public IpamConfig {
        ranges = List.copyOf(ranges);
        routes = List.copyOf(routes);
        requestedIps = List.copyOf(requestedIps);
    }

    /** {@code dataDir}, or the reference default {@value #DEFAULT_DATA_DIR} when unset or empty. */
    public Path effectiveDataDir() {
        return Path.of(dataDir == null || dataDir.isEmpty() ? DEFAULT_DATA_DIR : dataDir);
    }

    /** Where a network's reservations live: {@code ipam.dataDir} (or its default) and the network name. */
    public record StoreLocation(Path dataDir, String network) {}

    /**
     * The store of a config, reading nothing but {@code name} and {@code ipam.dataDir} (a value of
     * the wrong type counts as unset: ADD refused it, so nothing was reserved under it).
     */
    public static StoreLocation storeOf(Map<String, Object> conf) {
        String name = Fields.value(conf, "name") instanceof String s ? s : "";
        String dir = Fields.value(conf, "ipam") instanceof Map<?, ?> ipam
                && Fields.value(Json.asObject(ipam), "dataDir") instanceof String d ? d : null;
        return new StoreLocation(Path.of(dir == null || dir.isEmpty() ? DEFAULT_DATA_DIR : dir), name);
    }

    /** Loads from the plugin's stdin text and the {@code CNI_ARGS} value (null or empty when unset). */
    public static IpamConfig load(String stdin, String cniArgs) {
        Map<String, Object> net;
        try {
            net = Json.parseObject(stdin);
        } catch (RuntimeException e) {
            throw Errors.withCause(new CniException(ErrorCode.DECODING_FAILURE, String.valueOf(e.getMessage())), e);
        }
        return load(net, CniArgs.parse(cniArgs));
    }

    /** Loads from the parsed network config and CNI_ARGS. */
    public static IpamConfig load(Map<String, Object> conf, CniArgs cniArgs) {
        Map<String, Object> net = conf;
        Map<String, Object> ipam = Fields.object(net, "ipam", "");
        if (ipam == null) throw Errors.config("IPAM config missing 'ipam' key");
        String name = Fields.string(net, "name", "");
        String cniVersion = Fields.string(net, "cniVersion", "");
        Map<String, Object> runtimeConfig = orEmpty(Fields.object(net, "runtimeConfig", ""));

        List<IpAddr> requested = requestedAddresses(net, runtimeConfig, cniArgs);

        // Parse everything before validating anything, as Go's json.Unmarshal does.
        RangeInput legacy = RangeInput.parse(ipam, "ipam");
        List<List<RangeInput>> rangeSets = new ArrayList<>();
        List<List<RangeInput>> fromRuntime = parseRangeSets(Fields.list(runtimeConfig, "ipRanges", "runtimeConfig"),
                "runtimeConfig.ipRanges");
        List<List<RangeInput>> fromIpam = parseRangeSets(Fields.list(ipam, "ranges", "ipam"), "ipam.ranges");
        List<Result.Route> routes = IpamConf.routes(withoutNullRoutes(ipam));

        // Final order, as upstream: the ipRanges capability, then the deprecated single
        // top-level range, then ipam.ranges. The index in this list names last_reserved_ip.<n>.
        rangeSets.addAll(fromRuntime);
        if (legacy.hasSubnet()) rangeSets.add(List.of(legacy));
        rangeSets.addAll(fromIpam);
        if (rangeSets.isEmpty()) throw Errors.config("no IP ranges specified");
        List<RangeSet> canonical = canonicalize(rangeSets, cniVersion);

        return new IpamConfig(name == null ? "" : name, cniVersion == null ? "" : cniVersion,
                Fields.string(ipam, "type", "ipam"), canonical, routes, Fields.string(ipam, "dataDir", "ipam"),
                Fields.string(ipam, "resolvConf", "ipam"), requested);
    }

    /** Requested addresses: CNI_ARGS, then args.cni.ips, then runtimeConfig.ips. */
    private static List<IpAddr> requestedAddresses(Map<String, Object> net, Map<String, Object> runtimeConfig,
                                                   CniArgs cniArgs) {
        List<IpAddr> requested = new ArrayList<>(requestedByCniArgs(cniArgs));
        Map<String, Object> args = orEmpty(Fields.object(net, "args", ""));
        Map<String, Object> argsCni = orEmpty(Fields.object(args, "cni", "args"));
        requested.addAll(parseIpList(Fields.stringList(argsCni, "ips", "args.cni"), ErrorCode.INVALID_NETWORK_CONFIG));
        requested.addAll(parseIpList(Fields.stringList(runtimeConfig, "ips", "runtimeConfig"),
                ErrorCode.INVALID_NETWORK_CONFIG));
        return requested;
    }

    /** The range sets canonicalized, then checked: per-family counts against the version, no two overlapping. */
    private static List<RangeSet> canonicalize(List<List<RangeInput>> rangeSets, String cniVersion) {
        List<RangeSet> canonical = new ArrayList<>(rangeSets.size());
        int numV4 = 0;
        int numV6 = 0;
        for (int i = 0; i < rangeSets.size(); i++) {
            RangeSet set;
            try {
                List<Range> ranges = new ArrayList<>();
                if (rangeSets.get(i).isEmpty()) throw Errors.config("empty range set");
                for (RangeInput in : rangeSets.get(i)) ranges.add(in.canonicalize());
                set = RangeSet.of(ranges);
            } catch (CniException e) {
                throw Errors.prefixed("invalid range set " + i + ": ", e);
            }
            if (set.isV6()) numV6++;
            else numV4++;
            canonical.add(set);
        }

        // CNI spec 0.2.0 and below supported only one address per family.
        if ((numV4 > 1 || numV6 > 1) && !versionAtLeast(cniVersion, 0, 3, 0)) {
            throw Errors.config("CNI version " + (cniVersion == null ? "" : cniVersion)
                    + " does not support more than 1 address per family");
        }

        for (int i = 0; i < canonical.size(); i++) {
            for (int j = i + 1; j < canonical.size(); j++) {
                if (canonical.get(i).overlaps(canonical.get(j))) {
                    throw Errors.config("range set " + i + " overlaps with " + j);
                }
            }
        }

        return canonical;
    }

    private static Map<String, Object> orEmpty(Map<String, Object> m) {
        return m == null ? Map.of() : m;
    }

    /** The ipam object with null routes dropped (Go leaves a nil *Route). */
    private static Map<String, Object> withoutNullRoutes(Map<String, Object> ipam) {
        List<Object> raw = Fields.list(ipam, "routes", "ipam");
        if (raw == null) return ipam;
        List<Object> routes = new ArrayList<>();
        for (Object o : raw) {
            if (o == null) continue;
            routes.add(o);
        }
        Map<String, Object> out = new LinkedHashMap<>(ipam);
        out.keySet().removeIf(k -> Fields.names(k, "routes"));
        out.put("routes", routes);
        return out;
    }

    /**
     * One range as written: each field null when absent (or an empty string, as Go treats it).
     * {@code subnetProblem} is set when the subnet parsed but cannot form a range (an
     * IPv4-mapped address with an IPv6 mask): upstream reports that from the range's
     * canonicalization, so it is raised there, inside "invalid range set N: ".
     */
    record RangeInput(Cidr subnet, String subnetProblem, IpAddr rangeStart, IpAddr rangeEnd, IpAddr gateway) {
        static RangeInput parse(Map<String, Object> obj, String where) {
            String text = Fields.string(obj, "subnet", where);
            Cidr subnet = null;
            String problem = null;
            if (text != null && !text.isEmpty()) {
                try {
                    subnet = parseCidr(text);
                } catch (CniException e) {
                    if (!e.msg().equals(MISMATCH)) throw e;
                    problem = MISMATCH;
                }
            }
            return new RangeInput(subnet, problem,
                    optionalIp(obj, "rangeStart", where),
                    optionalIp(obj, "rangeEnd", where),
                    optionalIp(obj, "gateway", where));
        }

        boolean hasSubnet() {
            return subnet != null || subnetProblem != null;
        }

        Range canonicalize() {
            if (subnetProblem != null) throw Errors.config(subnetProblem);
            return Range.canonicalize(subnet, rangeStart, rangeEnd, gateway);
        }
    }

    private static final String MISMATCH = "IPNet IP and Mask version mismatch";

    private static IpAddr optionalIp(Map<String, Object> obj, String key, String where) {
        String s = Fields.string(obj, key, where);
        return s == null || s.isEmpty() ? null : parseIp(s);
    }

    private static List<List<RangeInput>> parseRangeSets(List<Object> raw, String where) {
        List<List<RangeInput>> out = new ArrayList<>();
        if (raw == null) return out;
        for (int i = 0; i < raw.size(); i++) {
            String at = where + "[" + i + "]";
            if (!(raw.get(i) instanceof List<?> set)) {
                throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + at + "'",
                        "expected a list of ranges");
            }
            List<RangeInput> ranges = new ArrayList<>();
            for (int j = 0; j < set.size(); j++) {
                String rangeAt = at + "[" + j + "]";
                ranges.add(RangeInput.parse(Fields.element(set.get(j), rangeAt), rangeAt));
            }
            out.add(ranges);
        }
        return out;
    }

    /** CNI_ARGS {@code IP=}: one address, or (a jcni extension) several separated by commas. */
    private static List<IpAddr> requestedByCniArgs(CniArgs args) {
        List<IpAddr> out = new ArrayList<>();
        if (args == null) return out;
        String value = args.get("IP");
        if (value != null && !value.isEmpty()) { // an empty ip.IP: nothing requested
            try {
                for (String one : value.split(",", -1)) out.add(parseIpArg(one.strip(), ErrorCode.INVALID_ENVIRONMENT));
            } catch (CniException e) {
                throw Errors.prefixed("ARGS: error parsing value of pair \"IP=" + value + "\": ", e);
            }
        }
        args.requireKnown(Set.of("IP"));
        return out;
    }

    private static List<IpAddr> parseIpList(List<String> raw, ErrorCode code) {
        List<IpAddr> out = new ArrayList<>();
        if (raw == null) return out;
        for (String s : raw) out.add(parseIpArg(s, code));
        return out;
    }

    /**
     * A requested address in the form of upstream's {@code ip.IP}: {@code addr} or
     * {@code addr/prefix} (the prefix is ignored).
     */
    static IpAddr parseIpArg(String s, ErrorCode code) {
        if (s.isEmpty()) throw new CniException(code, "cannot understand ip: IP <nil> not v4 nor v6");
        IpAddr ip;
        if (s.indexOf('/') >= 0) {
            try {
                ip = parseCidr(s).address();
            } catch (CniException e) {
                ip = null;
            }
        } else {
            ip = IpAddr.tryParse(s);
        }
        if (ip == null) throw new CniException(code, "invalid IP address " + s);
        return ip;
    }

    /** Parses an address like Go's {@code net.ParseIP}, failing with Go's text-unmarshaller message. */
    static IpAddr parseIp(String s) {
        IpAddr ip = IpAddr.tryParse(s);
        if (ip == null) throw Errors.config("invalid IP address: " + s);
        return ip;
    }

    /**
     * Parses {@code addr/len} like Go's {@code net.ParseCIDR}, with Go's error texts: the prefix is
     * decimal digits (leading zeros allowed), and an IPv4-mapped IPv6 text gets a 128-bit mask,
     * which a range then refuses as a version mismatch.
     */
    static Cidr parseCidr(String s) {
        int slash = s.indexOf('/');
        String addr = slash < 0 ? "" : s.substring(0, slash);
        IpAddr ip = slash < 0 ? null : IpAddr.tryParse(addr);
        int prefix = slash < 0 ? -1 : parsePrefix(s.substring(slash + 1));
        int textBits = addr.indexOf(':') >= 0 ? 128 : 32;
        if (ip == null || prefix < 0 || prefix > textBits) throw Errors.config("invalid CIDR address: " + s);
        if (ip.bits() != textBits) throw Errors.config(MISMATCH);
        return new Cidr(ip, prefix);
    }

    /** Decimal digits only, no sign (Go's {@code dtoi}, which tolerates leading zeros). */
    private static int parsePrefix(String s) {
        if (s.isEmpty() || s.length() > 6) return -1;
        int v = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** Upstream's {@code version.GreaterThanOrEqualTo}: an unparsable version compares false. */
    static boolean versionAtLeast(String version, int major, int minor, int micro) {
        if (version == null || version.isEmpty()) return false;
        String[] parts = version.split("\\.", -1);
        if (parts.length > 3) return false;
        int[] v = new int[3];
        try {
            for (int i = 0; i < parts.length; i++) v[i] = Integer.parseInt(parts[i]);
        } catch (NumberFormatException e) {
            return false;
        }
        int[] w = {major, minor, micro};
        for (int i = 0; i < 3; i++) {
            if (v[i] != w[i]) return v[i] > w[i];
        }
        return true;
    }
}
