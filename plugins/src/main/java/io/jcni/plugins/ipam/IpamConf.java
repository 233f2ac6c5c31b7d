package io.jcni.plugins.ipam;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Cidr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Config pieces every IPAM plugin reads the same way: the ipam object, its routes and its dns. */
public final class IpamConf {
    private IpamConf() {}

    /** IPAM plugins get the whole network config; their own settings are under "ipam". */
    public static Map<String, Object> ipam(Map<String, Object> conf) {
        Map<String, Object> ipam = Fields.object(conf, "ipam", "");
        if (ipam == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "IPAM config missing 'ipam' key");
        return ipam;
    }

    /** "routes": [{"dst": "0.0.0.0/0", "gw": "10.1.0.1"}], validated. */
    public static List<Result.Route> routes(Map<String, Object> ipam) {
        List<Result.Route> out = new ArrayList<>();
        List<Object> raw = Fields.list(ipam, "routes", "ipam");
        if (raw == null) return out;
        for (int i = 0; i < raw.size(); i++) {
            String where = "ipam.routes[" + i + "]";
            Map<String, Object> m = Fields.element(raw.get(i), where);
            String dst = Fields.requireString(m, "dst", where);
            Cidr c = Cidr.tryParse(dst);
            if (c == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid route destination", where + ".dst: \"" + dst + "\"");
            String gw = Fields.string(m, "gw", where);
            IpAddr gwIp = gw == null ? null : IpAddr.tryParse(gw);
            if (gw != null && gwIp == null) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid route gateway", where + ".gw: \"" + gw + "\"");
            }
            // Go re-prints the destination from its parsed form, host bits kept.
            out.add(new Result.Route(c, gwIp,
                    intOrNull(m, "mtu", where), intOrNull(m, "advmss", where), intOrNull(m, "priority", where),
                    intOrNull(m, "table", where), intOrNull(m, "scope", where)));
        }
        return out;
    }

    /** "dns": {"nameservers": [...], "domain": "...", "search": [...], "options": [...]}. */
    public static Result.Dns dns(Map<String, Object> ipam) {
        Map<String, Object> m = Fields.object(ipam, "dns", "ipam");
        if (m == null) return Result.Dns.EMPTY;
        return new Result.Dns(Fields.stringList(m, "nameservers", "ipam.dns"), Fields.string(m, "domain", "ipam.dns"),
                Fields.stringList(m, "search", "ipam.dns"), Fields.stringList(m, "options", "ipam.dns"));
    }

    private static Integer intOrNull(Map<String, Object> m, String k, String where) {
        Long l = Fields.integer(m, k, where);
        return l == null ? null : Math.toIntExact(l);
    }
}
