package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One host's subnet lease, as flanneld stores it: key {@code <prefix>/subnets/10.5.1.0-24}, value
 * {@code {"PublicIP":"192.168.0.2","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"aa:.."}}}.
 * Dual stack: key {@code 10.5.1.0-24&fd00:10:5:1::-64}, {@code "PublicIPv6":"fd77::2"} and
 * {@code "BackendV6Data":{"VNI":1,"VtepMAC":"<flannel-v6.1's MAC>"}}; IPv6 only (flanneld's
 * {@code MakeSubnetKey} with an empty IPv4 subnet): key {@code 0.0.0.0-0&fd00:10:5:1::-64} and
 * {@code "PublicIP":"0.0.0.0"}.
 *
 * @param subnet     the IPv4 subnet; {@link #NO_SUBNET} (0.0.0.0/0, flanneld's empty IP4Net) in an IPv6-only lease
 * @param vtepMac    the VXLAN device's MAC (vxlan only; null for host-gw or without IPv4)
 * @param ipv6Subnet the IPv6 subnet; null without IPv6
 * @param publicIpv6 the host's IPv6 underlay address; null without IPv6
 * @param vtepMacV6  {@code flannel-v6.<VNI>}'s MAC (vxlan with IPv6 only)
 */
public record Lease(Cidr subnet, IpAddr publicIp, String backendType, int vni, String vtepMac, Cidr ipv6Subnet, IpAddr publicIpv6,
        String vtepMacV6) {

    /** flanneld's empty IPv4 subnet, in the key of an IPv6-only lease. */
    public static final Cidr NO_SUBNET = Cidr.parse("0.0.0.0/0");
    /** flanneld's PublicIP of a host without IPv4 (its zero ip.IP4). */
    public static final IpAddr NO_PUBLIC_IP = IpAddr.parse("0.0.0.0");

    /** An IPv4-only lease. */
    public Lease(Cidr subnet, IpAddr publicIp, String backendType, int vni, String vtepMac) {
        this(subnet, publicIp, backendType, vni, vtepMac, null, null, null);
    }

    public boolean hasV4() {
        return !subnet.equals(NO_SUBNET);
    }

    public boolean hasV6() {
        return ipv6Subnet != null;
    }

    /**
     * This lease without the family a network of {@code v4}/{@code v6} does not use (flanneld
     * programs only its network's families; the other half of a dual-stack lease is not judged).
     * A lease with nothing of the network's families is left whole, for the validator to refuse.
     */
    public Lease forNetwork(boolean v4, boolean v6) {
        if (!v6 && hasV6() && hasV4()) return new Lease(subnet, publicIp, backendType, vni, vtepMac);
        if (!v4 && hasV6() && hasV4()) return new Lease(NO_SUBNET, NO_PUBLIC_IP, backendType, vni, null, ipv6Subnet, publicIpv6, vtepMacV6);
        return this;
    }

    /** What the lease is known by (the agent's maps): its IPv4 subnet, or its IPv6 subnet in an IPv6-only lease. */
    public Cidr id() {
        return hasV4() ? subnet : ipv6Subnet;
    }

    /** The key of an IPv4-only {@code subnet} under {@code prefix} (e.g. /coreos.com/network). */
    public static String key(String prefix, Cidr subnet) {
        return key(prefix, subnet, null);
    }

    /** flanneld's {@code MakeSubnetKey}: {@code 10.5.1.0-24}, or {@code 10.5.1.0-24&fd00:10:5:1::-64} with an IPv6 subnet. */
    public static String key(String prefix, Cidr subnet, Cidr ipv6Subnet) {
        Cidr v4 = subnet == null ? NO_SUBNET : subnet;
        String k = subnetsDir(prefix) + v4.network() + "-" + v4.prefix();
        return ipv6Subnet == null ? k : k + "&" + ipv6Subnet.network() + "-" + ipv6Subnet.prefix();
    }

    /** This lease's key under {@code prefix}. */
    public String key(String prefix) {
        return key(prefix, subnet, ipv6Subnet);
    }

    public static String subnetsDir(String prefix) {
        return prefix + "/subnets/";
    }

    /**
     * The subnets a key names, as spelled (host bits kept), as flanneld's {@code ParseSubnetKey}:
     * {@code A.B.C.D-LEN} optionally followed by {@code &IPV6-LEN} (lower-case hex).
     *
     * @param v6 null when the key names no IPv6 subnet
     */
    public record SubnetKey(Cidr v4, Cidr v6) {}

    /** The subnets a key names, or null when the key is not a subnet key. */
    public static SubnetKey parseKey(String prefix, String key) {
        String dir = subnetsDir(prefix);
        if (!key.startsWith(dir)) return null;
        String s = key.substring(dir.length());
        int amp = s.indexOf('&');
        Cidr v4 = cidrOfKeyPart(amp < 0 ? s : s.substring(0, amp));
        if (v4 == null || v4.isV6()) return null;
        if (amp < 0) return new SubnetKey(v4, null);
        String p6 = s.substring(amp + 1);
        if (!p6.equals(p6.toLowerCase(Locale.ROOT))) return null; // flanneld's regex: [a-f\d:]
        Cidr v6 = cidrOfKeyPart(p6);
        return v6 == null || !v6.isV6() ? null : new SubnetKey(v4, v6);
    }

    /** The subnet a key names (its IPv4 one; the IPv6 one in an IPv6-only key), or null when the key is not a subnet key. */
    public static Cidr subnetOfKey(String prefix, String key) {
        SubnetKey k = parseKey(prefix, key);
        if (k == null) return null;
        return k.v4().equals(NO_SUBNET) && k.v6() != null ? k.v6() : k.v4();
    }

    private static Cidr cidrOfKeyPart(String s) {
        int dash = s.lastIndexOf('-');
        if (dash < 0) return null;
        return Cidr.tryParse(s.substring(0, dash) + "/" + s.substring(dash + 1));
    }

    /** flanneld's JSON value (LeaseAttrs: PublicIP, PublicIPv6, BackendType, BackendData, BackendV6Data). */
    public String value() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("PublicIP", publicIp == null ? NO_PUBLIC_IP.toString() : publicIp.toString());
        m.put("PublicIPv6", publicIpv6 == null ? null : publicIpv6.toString());
        m.put("BackendType", backendType);
        m.put("BackendData", vtepMac == null ? null : backendData(vtepMac));
        if (vtepMacV6 != null) m.put("BackendV6Data", backendData(vtepMacV6));
        return Json.write(m);
    }

    private Map<String, Object> backendData(String mac) {
        Map<String, Object> bd = new LinkedHashMap<>();
        bd.put("VNI", (long) vni);
        bd.put("VtepMAC", mac);
        return bd;
    }

    /** Reads an IPv4-only key's lease; {@link IllegalArgumentException} when unusable. */
    public static Lease parse(Cidr subnet, String value) {
        return parse(new SubnetKey(subnet, null), value);
    }

    /**
     * Reads a lease written by flanneld or by jcni; {@link IllegalArgumentException} when unusable.
     * Keys match case-insensitively, as Go's {@code encoding/json} matches struct fields.
     */
    public static Lease parse(SubnetKey key, String value) {
        String name = key.v6() == null ? key.v4().toString() : key.v4() + "&" + key.v6();
        Map<String, Object> m;
        try {
            m = Json.parseObject(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("lease " + name + ": not JSON");
        }
        boolean v4 = !key.v4().masked().equals(NO_SUBNET);
        Object pub = field(m, "PublicIP");
        IpAddr ip = pub instanceof String s ? IpAddr.tryParse(s) : null;
        if (ip == null && pub == null && !v4) ip = NO_PUBLIC_IP;
        if (ip == null || ip.isV6()) throw new IllegalArgumentException("lease " + name + ": no IPv4 PublicIP");
        String type = field(m, "BackendType") instanceof String t ? t : "";
        Object[] bd = backendData(field(m, "BackendData"));
        if (v4 && type.equals("vxlan") && bd[0] == null) throw new IllegalArgumentException("lease " + name + ": vxlan without VtepMAC");
        if (key.v6() == null) return new Lease(key.v4().masked(), ip, type, (int) bd[1], (String) bd[0]);
        Object pub6 = field(m, "PublicIPv6");
        IpAddr ip6 = pub6 instanceof String s ? IpAddr.tryParse(s) : null;
        if (ip6 == null || !ip6.isV6()) throw new IllegalArgumentException("lease " + name + ": an IPv6 subnet without an IPv6 PublicIPv6");
        Object[] bd6 = backendData(field(m, "BackendV6Data"));
        if (type.equals("vxlan") && bd6[0] == null) throw new IllegalArgumentException("lease " + name + ": vxlan without BackendV6Data.VtepMAC");
        int vni = v4 ? (int) bd[1] : (int) bd6[1];
        return new Lease(key.v4().masked(), ip, type, vni, (String) bd[0], key.v6().masked(), ip6, (String) bd6[0]);
    }

    /** {VtepMAC or null, VNI or 0} of a BackendData object. */
    private static Object[] backendData(Object o) {
        String mac = null;
        int vni = 0;
        if (o instanceof Map<?, ?> bd) {
            Map<String, Object> d = Json.asObject(bd);
            if (field(d, "VtepMAC") instanceof String v) mac = v;
            if (field(d, "VNI") instanceof Long n) vni = n.intValue();
        }
        return new Object[] {mac, vni};
    }

    /** Go's field matching: the exact name, else the last key equal to it ignoring case. */
    private static Object field(Map<String, Object> m, String name) {
        if (m.containsKey(name)) return m.get(name);
        Object v = null;
        for (var e : m.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) v = e.getValue();
        }
        return v;
    }
}
