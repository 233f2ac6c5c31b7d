package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One host's subnet lease, as flanneld stores it: key {@code <prefix>/subnets/10.5.1.0-24}, value
 * {@code {"PublicIP":"192.168.0.2","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:.."}}}.
 *
 * @param vtepMac the VXLAN device's MAC (vxlan only; null for host-gw)
 */
public record Lease(Cidr subnet, IpAddr publicIp, String backendType, int vni, String vtepMac) {

    /** The key of {@code subnet} under {@code prefix} (e.g. /coreos.com/network). */
    public static String key(String prefix, Cidr subnet) {
        return subnetsDir(prefix) + subnet.network() + "-" + subnet.prefix();
    }

    public static String subnetsDir(String prefix) {
        return prefix + "/subnets/";
    }

    /** The subnet a key names, or null when the key is not a subnet key. */
    public static Cidr subnetOfKey(String prefix, String key) {
        String dir = subnetsDir(prefix);
        if (!key.startsWith(dir)) return null;
        String s = key.substring(dir.length());
        int dash = s.lastIndexOf('-');
        if (dash < 0) return null;
        return Cidr.tryParse(s.substring(0, dash) + "/" + s.substring(dash + 1));
    }

    /** flanneld's JSON value. */
    public String value() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("PublicIP", publicIp.toString());
        m.put("PublicIPv6", null);
        m.put("BackendType", backendType);
        if (vtepMac != null) {
            Map<String, Object> bd = new LinkedHashMap<>();
            bd.put("VNI", (long) vni);
            bd.put("VtepMAC", vtepMac);
            m.put("BackendData", bd);
        } else {
            m.put("BackendData", null);
        }
        return Json.write(m);
    }

    /** Reads a lease written by flanneld or by jcni; {@link IllegalArgumentException} when unusable. */
    public static Lease parse(Cidr subnet, String value) {
        Map<String, Object> m;
        try {
            m = Json.parseObject(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("lease " + subnet + ": not JSON");
        }
        IpAddr ip = m.get("PublicIP") instanceof String s ? IpAddr.tryParse(s) : null;
        if (ip == null || ip.isV6()) throw new IllegalArgumentException("lease " + subnet + ": no IPv4 PublicIP");
        String type = m.get("BackendType") instanceof String t ? t : "";
        String mac = null;
        int vni = 0;
        if (m.get("BackendData") instanceof Map<?, ?> bd) {
            Map<String, Object> d = Json.asObject(bd);
            if (d.get("VtepMAC") instanceof String v) mac = v;
            if (d.get("VNI") instanceof Long n) vni = n.intValue();
        }
        if (type.equals("vxlan") && mac == null) throw new IllegalArgumentException("lease " + subnet + ": vxlan without VtepMAC");
        return new Lease(subnet.masked(), ip, type, vni, mac);
    }
}
