package io.jcni.plugins.ipam.hostlocal;

import io.jcni.spec.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The host-local view of a network config, loaded like the reference {@code LoadIPAMConfig}
 * (backend/allocator/config.go): same keys, same defaults, same order of checks and messages.
 *
 * <p>IPAM plugins receive the whole network config, so {@code name}, {@code cniVersion},
 * {@code args} and {@code runtimeConfig} come from the top level and the rest from {@code ipam}.
 *
 * @param requestedIps addresses asked for by CNI_ARGS {@code IP=}, then {@code args.cni.ips}, then
 *     the {@code ips} capability ({@code runtimeConfig.ips}), in that order, duplicates kept
 * @param dataDir {@code ipam.dataDir} as written, or null; see {@link #effectiveDataDir()}
 */
public record IpamConfig(String name, String cniVersion, String type, List<RangeSet> ranges, List<Route> routes,
        String dataDir, String resolvConf, List<IpAddress> requestedIps) {

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

    /**
     * Loads the config from the plugin's stdin and the {@code CNI_ARGS} environment value (null or
     * empty when unset).
     */
    public static IpamConfig load(String stdin, String cniArgs) {
        Map<String, Object> net;
        try {
            net = Json.parseObject(stdin);
        } catch (RuntimeException e) {
            throw new IpamException(e.getMessage(), e);
        }
        Map<String, Object> ipam = JsonFields.object(net, "ipam");
        if (ipam == null) throw new IpamException("IPAM config missing 'ipam' key");
        String name = JsonFields.string(net, "name");
        String cniVersion = JsonFields.string(net, "cniVersion");
        Map<String, Object> runtimeConfig = JsonFields.object(net, "runtimeConfig");

        // Requested addresses: CNI_ARGS, then args.cni.ips, then runtimeConfig.ips.
        List<IpAddress> requested = new ArrayList<>(CniArgs.requestedIps(cniArgs));
        Map<String, Object> args = JsonFields.object(net, "args");
        Map<String, Object> argsCni = JsonFields.object(args, "cni");
        requested.addAll(parseIpList(JsonFields.list(argsCni, "ips"), "args.cni.ips"));
        requested.addAll(parseIpList(JsonFields.list(runtimeConfig, "ips"), "runtimeConfig.ips"));

        // Parse everything before validating anything, as Go's json.Unmarshal does.
        RangeInput legacy = RangeInput.parse(ipam);
        List<List<RangeInput>> rangeSets = new ArrayList<>();
        List<List<RangeInput>> fromRuntime = parseRangeSets(JsonFields.list(runtimeConfig, "ipRanges"), "ipRanges");
        List<List<RangeInput>> fromIpam = parseRangeSets(JsonFields.list(ipam, "ranges"), "ranges");
        List<Route> routes = parseRoutes(JsonFields.list(ipam, "routes"));

        // Final order, as upstream: the ipRanges capability, then the deprecated single
        // top-level range, then ipam.ranges. The index in this list names last_reserved_ip.<n>.
        rangeSets.addAll(fromRuntime);
        if (legacy.subnet() != null) rangeSets.add(List.of(legacy));
        rangeSets.addAll(fromIpam);
        if (rangeSets.isEmpty()) throw new IpamException("no IP ranges specified");

        List<RangeSet> canonical = new ArrayList<>(rangeSets.size());
        int numV4 = 0;
        int numV6 = 0;
        for (int i = 0; i < rangeSets.size(); i++) {
            RangeSet set;
            try {
                List<Range> ranges = new ArrayList<>();
                if (rangeSets.get(i).isEmpty()) throw new IpamException("empty range set");
                for (RangeInput in : rangeSets.get(i)) ranges.add(in.canonicalize());
                set = RangeSet.of(ranges);
            } catch (IpamException e) {
                throw new IpamException("invalid range set " + i + ": " + e.getMessage(), e);
            }
            if (set.isV6()) numV6++;
            else numV4++;
            canonical.add(set);
        }

        // CNI spec 0.2.0 and below supported only one address per family.
        if ((numV4 > 1 || numV6 > 1) && !versionAtLeast(cniVersion, 0, 3, 0)) {
            throw new IpamException("CNI version " + (cniVersion == null ? "" : cniVersion)
                    + " does not support more than 1 address per family");
        }

        for (int i = 0; i < canonical.size(); i++) {
            for (int j = i + 1; j < canonical.size(); j++) {
                if (canonical.get(i).overlaps(canonical.get(j))) {
                    throw new IpamException("range set " + i + " overlaps with " + j);
                }
            }
        }

        return new IpamConfig(name == null ? "" : name, cniVersion == null ? "" : cniVersion,
                JsonFields.string(ipam, "type"), canonical, routes, JsonFields.string(ipam, "dataDir"),
                JsonFields.string(ipam, "resolvConf"), requested);
    }

    /** One range as written: each field null when absent (or an empty string, as Go treats it). */
    record RangeInput(Cidr subnet, IpAddress rangeStart, IpAddress rangeEnd, IpAddress gateway) {
        static RangeInput parse(Map<String, Object> obj) {
            String subnet = JsonFields.string(obj, "subnet");
            return new RangeInput(
                    subnet == null || subnet.isEmpty() ? null : Cidr.parse(subnet),
                    optionalIp(obj, "rangeStart"),
                    optionalIp(obj, "rangeEnd"),
                    optionalIp(obj, "gateway"));
        }

        Range canonicalize() {
            return Range.canonicalize(subnet, rangeStart, rangeEnd, gateway);
        }
    }

    private static IpAddress optionalIp(Map<String, Object> obj, String key) {
        String s = JsonFields.string(obj, key);
        return s == null || s.isEmpty() ? null : IpAddress.parse(s);
    }

    private static List<List<RangeInput>> parseRangeSets(List<Object> raw, String key) {
        List<List<RangeInput>> out = new ArrayList<>();
        if (raw == null) return out;
        for (Object set : raw) {
            if (!(set instanceof List<?>)) {
                throw JsonFields.typeError(key, set, "RangeSet (an array of ranges)");
            }
            List<RangeInput> ranges = new ArrayList<>();
            for (Object r : Json.asList(set)) ranges.add(RangeInput.parse(JsonFields.asObject(r, key)));
            out.add(ranges);
        }
        return out;
    }

    private static List<Route> parseRoutes(List<Object> raw) {
        List<Route> out = new ArrayList<>();
        if (raw == null) return out;
        for (Object o : raw) {
            if (o == null) continue; // Go leaves a nil *Route; nothing to route
            Map<String, Object> r = JsonFields.asObject(o, "routes");
            String dst = JsonFields.string(r, "dst");
            String gw = JsonFields.string(r, "gw");
            out.add(new Route(
                    dst == null || dst.isEmpty() ? null : Cidr.parse(dst),
                    gw == null || gw.isEmpty() ? null : IpAddress.parse(gw),
                    JsonFields.integer(r, "mtu"),
                    JsonFields.integer(r, "advmss"),
                    JsonFields.integer(r, "priority"),
                    JsonFields.integer(r, "table"),
                    JsonFields.integer(r, "scope")));
        }
        return out;
    }

    private static List<IpAddress> parseIpList(List<Object> raw, String key) {
        List<IpAddress> out = new ArrayList<>();
        if (raw == null) return out;
        for (Object o : raw) out.add(parseIpArg(JsonFields.asString(o, key)));
        return out;
    }

    /**
     * A requested address in the form of upstream's {@code ip.IP}: {@code addr} or
     * {@code addr/prefix} (the prefix is ignored).
     */
    static IpAddress parseIpArg(String s) {
        if (s.isEmpty()) throw new IpamException("cannot understand ip: IP <nil> not v4 nor v6");
        IpAddress ip;
        if (s.indexOf('/') >= 0) {
            try {
                ip = Cidr.parse(s).address();
            } catch (IpamException e) {
                ip = null;
            }
        } else {
            ip = IpAddress.tryParse(s);
        }
        if (ip == null) throw new IpamException("invalid IP address " + s);
        return ip;
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
