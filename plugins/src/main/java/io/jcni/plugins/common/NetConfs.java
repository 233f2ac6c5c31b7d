package io.jcni.plugins.common;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Result;
import java.util.Map;

/** Config keys the main plugins share, read the way their Go NetConf structs decode them. */
public final class NetConfs {
    private NetConfs() {}

    /** {@code mtu}: an integer, 0 (or absent) for the kernel's default. */
    public static int mtu(Map<String, Object> conf) {
        Long mtu = Fields.integer(conf, "mtu", "");
        if (mtu == null) return 0;
        if (mtu < 0 || mtu > 65535) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'mtu'", "mtu " + mtu + " is out of range");
        }
        return mtu.intValue();
    }

    /** The IPAM plugin's type, or null when the config has no {@code ipam.type} (layer 2 only). */
    public static String ipamType(Map<String, Object> conf) {
        Map<String, Object> ipam = Fields.object(conf, "ipam", "");
        if (ipam == null) return null;
        String t = Fields.string(ipam, "type", "ipam");
        return t == null || t.isEmpty() ? null : t;
    }

    /** The IPAM type for plugins that cannot work without one. */
    public static String requireIpamType(Map<String, Object> conf) {
        String t = ipamType(conf);
        if (t == null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing 'ipam.type'", "this plugin needs an IPAM plugin");
        }
        return t;
    }

    /** The network config's own top-level {@code dns}, or null when it sets nothing (types.NetConf.DNS). */
    public static Result.Dns dns(Map<String, Object> conf) {
        Map<String, Object> m = Fields.object(conf, "dns", "");
        if (m == null) return null;
        var ns = Fields.stringList(m, "nameservers", "dns");
        var domain = Fields.string(m, "domain", "dns");
        var search = Fields.stringList(m, "search", "dns");
        var options = Fields.stringList(m, "options", "dns");
        // Go's dnsConfSet: any list present (even empty) or a non-empty domain counts as set.
        boolean set = ns != null || search != null || options != null || (domain != null && !domain.isEmpty());
        return set ? new Result.Dns(ns, domain, search, options) : null;
    }
}
