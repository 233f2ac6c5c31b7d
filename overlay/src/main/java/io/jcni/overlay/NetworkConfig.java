package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * flannel's network configuration, the JSON at {@code <prefix>/config}, read as flanneld reads it:
 * <pre>{"Network":"10.5.0.0/16","SubnetLen":24,"SubnetMin":"10.5.1.0","SubnetMax":"10.5.254.0",
 *  "Backend":{"Type":"vxlan","VNI":1,"Port":8472,"MTU":1500,"GBP":false,"Learning":false,"DirectRouting":false}}</pre>
 * flanneld decodes it with Go's {@code encoding/json} into a struct ({@code subnet.Config}, then the
 * backend's own struct for {@code Backend}), so keys match case-insensitively, the last of several
 * spellings wins, integers come only from integral literals and unknown keys are ignored: jcni reads
 * it through the same reader as the plugins' configs ({@link Fields}). Checks and defaults are
 * flanneld's {@code CheckNetworkConfig}, with its messages. A key flanneld acts on and jcni does
 * not implement is refused by name ({@link #parse} throws); nothing flanneld would act on is
 * silently dropped. The table key by key is in overlay/README.md.
 *
 * @param subnetMin the first subnet's network address that may be leased
 * @param subnetMax the last subnet's network address that may be leased
 */
public record NetworkConfig(Cidr network, int subnetLen, IpAddr subnetMin, IpAddr subnetMax, Backend backend) {

    /** The closed set of backends. */
    public sealed interface Backend permits Vxlan, HostGw {
        /** flannel's {@code BackendType} in leases. */
        String type();

        /** The pods' MTU (FLANNEL_MTU) on an underlay device of MTU {@code underlayMtu}. */
        int podMtu(int underlayMtu);
    }

    /** Linux's VXLAN port, which the kernel uses when no port is given (flanneld's {@code Port: 0}). */
    public static final int KERNEL_VXLAN_PORT = 8472;

    /**
     * VXLAN as flannel's backend: VNI 1 and port 8472 by default, learning off.
     *
     * @param mtu           {@code Backend.MTU}: the MTU the encapsulation is taken from (device and pods get it minus 50); 0: the underlay's
     * @param gbp           {@code Backend.GBP}: the device carries VXLAN Group Based Policy (IFLA_VXLAN_GBP)
     * @param learning      {@code Backend.Learning}: the device learns source addresses (flanneld's default: off)
     * @param directRouting {@code Backend.DirectRouting}: a host on one of the underlay's connected networks is routed to directly, without VXLAN
     */
    public record Vxlan(int vni, int port, int mtu, boolean gbp, boolean learning, boolean directRouting) implements Backend {
        /** Bytes of encapsulation: outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 (flannel's encapOverhead). */
        public static final int OVERHEAD = 50;

        public Vxlan(int vni, int port) {
            this(vni, port, 0, false, false, false);
        }

        @Override
        public String type() {
            return "vxlan";
        }

        /** As flanneld: {@code Backend.MTU} (default: the underlay's) minus the encapsulation; the device gets the same. */
        @Override
        public int podMtu(int underlayMtu) {
            return (mtu > 0 ? mtu : underlayMtu) - OVERHEAD;
        }

        public String device() {
            return "flannel." + vni;
        }
    }

    /** host-gw: plain routes via the other hosts' addresses; they must share an L2 segment. No keys of its own. */
    public record HostGw() implements Backend {
        @Override
        public String type() {
            return "host-gw";
        }

        @Override
        public int podMtu(int underlayMtu) {
            return underlayMtu;
        }
    }

    /** Backend types flanneld registers that jcni does not implement (named in the refusal). */
    private static final Set<String> FLANNEL_ONLY_BACKENDS = Set.of("udp", "ipip", "ipsec", "wireguard", "alloc", "extension",
            "tencent-vpc", "ali-vpc", "aws-vpc", "gce");

    /**
     * Parses and checks; {@link IllegalArgumentException} with a message naming the key on anything
     * flanneld refuses or jcni does not implement.
     */
    public static NetworkConfig parse(String json) {
        Map<String, Object> m;
        try {
            m = Json.parseObject(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("network config is not a JSON object: " + e.getMessage());
        }
        try {
            return read(m);
        } catch (CniException e) { // the reader's type errors: "invalid type for 'Backend.VNI': expected an integer, got string"
            throw new IllegalArgumentException("network config: " + e.msg() + (e.details() == null ? "" : ": " + e.details()));
        }
    }

    private static NetworkConfig read(Map<String, Object> m) {
        // Dual stack: flanneld's EnableIPv4 defaults to true; the IPv6 keys only matter with EnableIPv6.
        if (!Fields.bool(m, "EnableIPv4", "", true)) throw refused("EnableIPv4", "false (an IPv6-only network) is not supported");
        if (Fields.bool(m, "EnableIPv6", "", false)) throw refused("EnableIPv6", "dual-stack is not supported yet");
        ipv6Keys(m);
        Fields.bool(m, "EnableNFTables", ""); // type-checked; jcni's masquerade is nftables either way

        String net = Fields.string(m, "Network", "");
        Cidr c = net == null ? null : Cidr.tryParse(net);
        if (net != null && (c == null || c.isV6())) throw refused("Network", "not an IPv4 CIDR: " + net);
        if (c == null || (c.prefix() == 0 && c.network().equals(IpAddr.parse("0.0.0.0")))) {
            throw refused("Network", "please define a correct Network parameter in the flannel config");
        }
        Cidr network = c.masked();
        Long givenLen = Fields.integer(m, "SubnetLen", "");
        if (givenLen != null && givenLen < 0) throw refused("SubnetLen", "must not be negative: " + givenLen);
        int len;
        if (givenLen != null && givenLen > 0) {
            if (givenLen > 30) throw refused("SubnetLen", "SubnetLen must be less than /31");
            if (givenLen < network.prefix() + 2) {
                throw refused("SubnetLen", "network must be able to accommodate at least four subnets (SubnetLen " + givenLen + " in " + network + ")");
            }
            len = givenLen.intValue();
        } else if (network.prefix() > 28) {
            throw refused("Network", "network is too small. Minimum useful network prefix is /28");
        } else {
            len = network.prefix() <= 22 ? 24 : network.prefix() + 2;
        }
        long size = 1L << (32 - len);
        IpAddr min = address(m, "SubnetMin", network, network.network().add(size), len);
        IpAddr max = address(m, "SubnetMax", network, network.last().add(1 - size), len);
        if (min.compareTo(max) > 0) throw refused("SubnetMin", min + " is above SubnetMax " + max + ": no subnet could be leased");
        return new NetworkConfig(network, len, min, max, backend(m));
    }

    /** flanneld decodes the IPv6 keys even when EnableIPv6 is off: a malformed one fails there too. */
    private static void ipv6Keys(Map<String, Object> m) {
        String v6net = Fields.string(m, "IPv6Network", "");
        if (v6net != null && !v6net.isEmpty()) {
            Cidr c = Cidr.tryParse(v6net);
            if (c == null || !c.isV6()) throw refused("IPv6Network", "not an IPv6 CIDR: " + v6net);
        }
        for (String k : new String[] {"IPv6SubnetMin", "IPv6SubnetMax"}) {
            String a = Fields.string(m, k, "");
            if (a != null && IpAddr.tryParse(a) == null) throw refused(k, "not an IP address: " + a);
        }
        Long v6len = Fields.integer(m, "IPv6SubnetLen", "");
        if (v6len != null && v6len < 0) throw refused("IPv6SubnetLen", "must not be negative: " + v6len);
    }

    private static Backend backend(Map<String, Object> m) {
        Map<String, Object> b = Fields.object(m, "Backend", "");
        if (b == null) throw new IllegalArgumentException("network config: Backend is missing; flanneld would use udp, which jcni does not support");
        String given = Fields.string(b, "Type", "Backend");
        String type = given == null ? "" : given.toLowerCase(Locale.ROOT); // flanneld lower-cases the type
        return switch (type) {
            case "vxlan" -> vxlan(b);
            case "host-gw" -> new HostGw();
            default -> {
                if (FLANNEL_ONLY_BACKENDS.contains(type)) {
                    throw refused("Backend.Type", type + " is a flanneld backend jcni does not implement (vxlan, host-gw)");
                }
                throw refused("Backend.Type", "unknown backend type: " + type);
            }
        };
    }

    private static Vxlan vxlan(Map<String, Object> b) {
        long vni = orDefault(Fields.integer(b, "VNI", "Backend"), 1);
        if (vni < 1 || vni > 0xFFFFFF) throw refused("Backend.VNI", "out of range: " + vni + " (1..16777215)");
        long port = orDefault(Fields.integer(b, "Port", "Backend"), 0);
        if (port < 0 || port > 65535) throw refused("Backend.Port", "out of range: " + port + " (0 for the kernel's 8472, or 1..65535)");
        Long mtu = Fields.integer(b, "MTU", "Backend");
        // Pods get MTU - 50 and IPv4 needs 68: flanneld would pass anything lower to the kernel and the CNI plugin.
        if (mtu != null && (mtu < 68 + Vxlan.OVERHEAD || mtu > 65535)) {
            throw refused("Backend.MTU", "out of range: " + mtu + " (118..65535: pods get it minus " + Vxlan.OVERHEAD + "; leave it out for the underlay's)");
        }
        return new Vxlan((int) vni, port == 0 ? KERNEL_VXLAN_PORT : (int) port, mtu == null ? 0 : mtu.intValue(),
                Fields.bool(b, "GBP", "Backend", false), Fields.bool(b, "Learning", "Backend", false),
                Fields.bool(b, "DirectRouting", "Backend", false));
    }

    private static long orDefault(Long v, long dflt) {
        return v == null ? dflt : v;
    }

    /** flanneld's ip.IP4 decoding, its "0.0.0.0 means unset", and its range and alignment checks. */
    private static IpAddr address(Map<String, Object> m, String key, Cidr network, IpAddr dflt, int len) {
        String s = Fields.string(m, key, "");
        if (s == null) return dflt;
        IpAddr a = IpAddr.tryParse(s);
        if (a == null || a.isV6()) throw refused(key, "not an IPv4 address: " + s);
        if (a.equals(IpAddr.parse("0.0.0.0"))) return dflt;
        if (!network.contains(a)) throw refused(key, key + " is not in the range of the Network");
        if (!new Cidr(a, len).network().equals(a)) throw refused(key, key + " is not on a SubnetLen boundary: " + a);
        return a;
    }

    private static IllegalArgumentException refused(String key, String why) {
        return new IllegalArgumentException("network config: " + key + ": " + why);
    }

    /** How many subnets can be leased. */
    public long capacity() {
        return ((subnetMax.toBigInteger().longValue() - subnetMin.toBigInteger().longValue()) >> (32 - subnetLen)) + 1;
    }

    /** The {@code i}-th leasable subnet, from 0. */
    public Cidr subnet(long i) {
        return new Cidr(subnetMin.add(i << (32 - subnetLen)), subnetLen);
    }

    /** Whether {@code subnet} is one this config may lease. */
    public boolean leasable(Cidr subnet) {
        return !subnet.isV6() && subnet.prefix() == subnetLen && subnet.address().equals(subnet.network())
                && subnet.address().compareTo(subnetMin) >= 0 && subnet.address().compareTo(subnetMax) <= 0;
    }
}
