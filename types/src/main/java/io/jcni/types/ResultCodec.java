package io.jcni.types;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Wire formats of results, one per family of versions:
 * <ul>
 *   <li>0.1.0, 0.2.0: {@code ip4}/{@code ip6} objects with their own routes; one address per family.</li>
 *   <li>0.3.0, 0.3.1, 0.4.0: {@code interfaces}, {@code ips} with {@code version}, {@code routes}.</li>
 *   <li>1.0.0, 1.1.0: as 0.4.0 without {@code ips[].version}; 1.1.0 adds interface mtu, socketPath,
 *       pciID and route mtu, advmss, priority, table, scope.</li>
 * </ul>
 * Key order and omitted-empty fields follow the reference plugins' output.
 */
final class ResultCodec {
    private ResultCodec() {}

    static Result decode(Map<String, Object> json) {
        String version = Fields.string(json, "cniVersion", "result");
        CniVersion v;
        try {
            v = CniVersion.parse(version);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid result cniVersion", e.getMessage(), e);
        }
        if (!v.isSupported()) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "unsupported result version", "\"" + version + "\"");
        }
        Result.Dns dns = decodeDns(Fields.object(json, "dns", "result"));
        if (v.hasLegacyResult()) return decodeLegacy(json, v, dns);

        List<Result.Interface> interfaces = new ArrayList<>();
        List<Object> rawIfs = Fields.list(json, "interfaces", "result");
        if (rawIfs != null) {
            for (int i = 0; i < rawIfs.size(); i++) {
                Map<String, Object> m = obj(rawIfs.get(i), "result.interfaces[" + i + "]");
                String where = "result.interfaces[" + i + "]";
                interfaces.add(new Result.Interface(Fields.string(m, "name", where), Fields.string(m, "mac", where),
                        intOrNull(m, "mtu", where), Fields.string(m, "sandbox", where),
                        Fields.string(m, "socketPath", where), Fields.string(m, "pciID", where)));
            }
        }
        List<Result.IpConfig> ips = new ArrayList<>();
        List<Object> rawIps = Fields.list(json, "ips", "result");
        if (rawIps != null) {
            for (int i = 0; i < rawIps.size(); i++) {
                String where = "result.ips[" + i + "]";
                Map<String, Object> m = obj(rawIps.get(i), where);
                ips.add(new Result.IpConfig(cidr(m, "address", where), ip(m, "gateway", where),
                        intOrNull(m, "interface", where)));
            }
        }
        List<Result.Route> routes = decodeRoutes(Fields.list(json, "routes", "result"), "result.routes");
        return new Result(v.toString(), interfaces, ips, routes, dns);
    }

    private static Result decodeLegacy(Map<String, Object> json, CniVersion v, Result.Dns dns) {
        List<Result.IpConfig> ips = new ArrayList<>();
        List<Result.Route> routes = new ArrayList<>();
        for (String key : new String[] {"ip4", "ip6"}) {
            Map<String, Object> m = Fields.object(json, key, "result");
            if (m == null) continue;
            ips.add(new Result.IpConfig(cidr(m, "ip", "result." + key), ip(m, "gateway", "result." + key), null));
            routes.addAll(decodeRoutes(Fields.list(m, "routes", "result." + key), "result." + key + ".routes"));
        }
        return new Result(v.toString(), List.of(), ips, routes, dns);
    }

    private static List<Result.Route> decodeRoutes(List<Object> raw, String where) {
        List<Result.Route> routes = new ArrayList<>();
        if (raw == null) return routes;
        for (int i = 0; i < raw.size(); i++) {
            String w = where + "[" + i + "]";
            Map<String, Object> m = obj(raw.get(i), w);
            routes.add(new Result.Route(cidr(m, "dst", w), ip(m, "gw", w),
                    intOrNull(m, "mtu", w), intOrNull(m, "advmss", w), intOrNull(m, "priority", w),
                    intOrNull(m, "table", w), intOrNull(m, "scope", w)));
        }
        return routes;
    }

    private static Result.Dns decodeDns(Map<String, Object> m) {
        if (m == null) return Result.Dns.EMPTY;
        return new Result.Dns(Fields.stringList(m, "nameservers", "dns"), Fields.string(m, "domain", "dns"),
                Fields.stringList(m, "search", "dns"), Fields.stringList(m, "options", "dns"));
    }

    static Map<String, Object> encode(Result r, CniVersion v) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cniVersion", v.toString());
        if (v.hasLegacyResult()) return encodeLegacy(r, out);

        boolean v11 = v.atLeast(CniVersion.V1_1_0);
        boolean withIpVersion = !v.atLeast(CniVersion.V1_0_0);
        if (!r.interfaces().isEmpty()) {
            List<Object> l = new ArrayList<>();
            for (Result.Interface i : r.interfaces()) {
                Map<String, Object> m = new LinkedHashMap<>();
                putIfPresent(m, "name", i.name());
                putIfPresent(m, "mac", i.mac());
                if (v11 && i.mtu() != null && i.mtu() != 0) m.put("mtu", (long) i.mtu());
                putIfPresent(m, "sandbox", i.sandbox());
                if (v11) {
                    putIfPresent(m, "socketPath", i.socketPath());
                    putIfPresent(m, "pciID", i.pciID());
                }
                l.add(m);
            }
            out.put("interfaces", l);
        }
        if (!r.ips().isEmpty()) {
            List<Object> l = new ArrayList<>();
            for (Result.IpConfig ip : r.ips()) {
                Map<String, Object> m = new LinkedHashMap<>();
                if (withIpVersion) m.put("version", ip.isIpv6() ? "6" : "4");
                if (ip.interfaceIndex() != null) m.put("interface", (long) ip.interfaceIndex());
                m.put("address", ip.address().toString());
                putIfPresent(m, "gateway", ip.gateway());
                l.add(m);
            }
            out.put("ips", l);
        }
        if (!r.routes().isEmpty()) {
            List<Object> l = new ArrayList<>();
            for (Result.Route route : r.routes()) l.add(routeJson(v11 ? route : route.basic()));
            out.put("routes", l);
        }
        out.put("dns", Result.dnsJson(r.dns()));
        return out;
    }

    /** 0.1.0/0.2.0 keep the first IPv4 and the first IPv6 address, each with the routes of its family. */
    private static Map<String, Object> encodeLegacy(Result r, Map<String, Object> out) {
        Result.IpConfig ip4 = null, ip6 = null;
        for (Result.IpConfig ip : r.ips()) {
            if (ip.isIpv6()) {
                if (ip6 == null) ip6 = ip;
            } else if (ip4 == null) {
                ip4 = ip;
            }
        }
        if (ip4 != null) out.put("ip4", legacyIp(ip4, r.routes(), false));
        if (ip6 != null) out.put("ip6", legacyIp(ip6, r.routes(), true));
        out.put("dns", Result.dnsJson(r.dns()));
        return out;
    }

    private static Map<String, Object> legacyIp(Result.IpConfig ip, List<Result.Route> routes, boolean v6) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ip", ip.address().toString());
        putIfPresent(m, "gateway", ip.gateway());
        List<Object> l = new ArrayList<>();
        for (Result.Route route : routes) if (route.isIpv6() == v6) l.add(routeJson(route.basic()));
        if (!l.isEmpty()) m.put("routes", l);
        return m;
    }

    private static Map<String, Object> routeJson(Result.Route r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("dst", r.dst().toString());
        putIfPresent(m, "gw", r.gw());
        putIfPresentInt(m, "mtu", r.mtu());
        putIfPresentInt(m, "advmss", r.advmss());
        putIfPresentInt(m, "priority", r.priority());
        putIfPresentInt(m, "table", r.table());
        putIfPresentInt(m, "scope", r.scope());
        return m;
    }

    private static void putIfPresent(Map<String, Object> m, String k, String v) {
        if (v != null && !v.isEmpty()) m.put(k, v);
    }

    private static void putIfPresent(Map<String, Object> m, String k, IpAddr v) {
        if (v != null) m.put(k, v.toString());
    }

    private static void putIfPresentInt(Map<String, Object> m, String k, Integer v) {
        if (v != null) m.put(k, (long) v);
    }

    private static Integer intOrNull(Map<String, Object> m, String key, String where) {
        Long l = Fields.integer(m, key, where);
        if (l != null && (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE)) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid value for '" + Fields.path(where, key) + "'", l + " is out of range");
        }
        return l == null ? null : l.intValue();
    }

    /** A required address with prefix length, as Go's net.ParseCIDR takes it (the reference fails to decode anything else). */
    private static Cidr cidr(Map<String, Object> m, String key, String where) {
        String s = Fields.requireString(m, key, where);
        Cidr c = Cidr.tryParse(s);
        if (c == null) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid value for '" + Fields.path(where, key) + "'",
                    "\"" + Names.printable(s) + "\" is not an address with a prefix length");
        }
        return c;
    }

    /** An optional plain address; absent or "" is null, as Go's net.IP reads "" as nil. */
    private static IpAddr ip(Map<String, Object> m, String key, String where) {
        String s = Fields.string(m, key, where);
        if (s == null || s.isEmpty()) return null;
        IpAddr a = IpAddr.tryParse(s);
        if (a == null) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid value for '" + Fields.path(where, key) + "'",
                    "\"" + Names.printable(s) + "\" is not an IP address");
        }
        return a;
    }

    private static Map<String, Object> obj(Object v, String where) {
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + where + "'", "expected an object, got " + Fields.typeName(v));
    }
}
