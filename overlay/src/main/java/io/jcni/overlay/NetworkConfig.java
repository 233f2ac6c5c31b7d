package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.math.BigInteger;
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
 * <p>Dual stack as flanneld: {@code EnableIPv4} (default true) leases from {@code Network},
 * {@code EnableIPv6} from {@code IPv6Network}; either may be off, not both.
 *
 * @param v4 the IPv4 pool ({@code Network}, {@code SubnetLen}, ...); null with {@code "EnableIPv4":false}
 * @param v6 the IPv6 pool ({@code IPv6Network}, {@code IPv6SubnetLen}, ...); null unless {@code "EnableIPv6":true}
 */
public record NetworkConfig(Pool v4, Pool v6, Backend backend) {

    /**
     * The subnets one family leases: every {@code subnetLen} subnet of {@code network} from
     * {@code subnetMin} to {@code subnetMax} (network addresses).
     */
    public record Pool(Cidr network, int subnetLen, IpAddr subnetMin, IpAddr subnetMax) {
        /** How many subnets can be leased (at most Long.MAX_VALUE: an IPv6 pool can hold more). */
        public long capacity() {
            BigInteger n = subnetMax.toBigInteger().subtract(subnetMin.toBigInteger()).shiftRight(network.address().bits() - subnetLen).add(BigInteger.ONE);
            return n.bitLength() < 63 ? n.longValue() : Long.MAX_VALUE;
        }

        /** The {@code i}-th leasable subnet, from 0. */
        public Cidr subnet(long i) {
            BigInteger a = subnetMin.toBigInteger().add(BigInteger.valueOf(i).shiftLeft(network.address().bits() - subnetLen));
            return new Cidr(IpAddr.fromBigInteger(a, network.isV6()), subnetLen);
        }

        /** Whether {@code subnet} is one this pool may lease. */
        public boolean leasable(Cidr subnet) {
            return subnet.isV6() == network.isV6() && subnet.prefix() == subnetLen && subnet.address().equals(subnet.network())
                    && subnet.address().compareTo(subnetMin) >= 0 && subnet.address().compareTo(subnetMax) <= 0;
        }
    }

    /** The closed set of backends. */
    public sealed interface Backend permits Vxlan, HostGw {
        /** flannel's {@code BackendType} in leases. */
        String type();

        /** The pods' MTU (FLANNEL_MTU) on an underlay device of MTU {@code underlayMtu}. */
        int podMtu(int underlayMtu);
    }

    /** IPv6's minimum link MTU (RFC 8200). */
    public static final int IPV6_MIN_MTU = 1280;

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
        /**
         * The same over an IPv6 underlay: the outer header is IPv6's 40 bytes. flanneld gives
         * {@code flannel-v6.<VNI>} the IPv4 figure (50), so its full-size IPv6 packets with DF do not
         * fit the underlay; jcni takes 70.
         */
        public static final int OVERHEAD_V6 = 70;

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

        /** flanneld's IPv6 device name. */
        public String deviceV6() {
            return "flannel-v6." + vni;
        }

        /** The IPv6 device's MTU ({@link #OVERHEAD_V6} instead of 50). */
        public int podMtuV6(int underlayMtu) {
            return (mtu > 0 ? mtu : underlayMtu) - OVERHEAD_V6;
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
        // flanneld's EnableIPv4 defaults to true; the other family's keys are decoded (a malformed one fails) but unused.
        boolean enable4 = Fields.bool(m, "EnableIPv4", "", true);
        boolean enable6 = Fields.bool(m, "EnableIPv6", "", false);
        if (!enable4 && !enable6) throw refused("EnableIPv4", "false with EnableIPv6 false: no family left to lease");
        Fields.bool(m, "EnableNFTables", ""); // type-checked; jcni's masquerade is nftables either way
        Pool v6 = ipv6Pool(m, enable6);
        Pool v4 = enable4 ? ipv4Pool(m) : null;
        if (!enable4) ipv4KeysDecoded(m);
        Backend backend = backend(m);
        // IPv6 links need an MTU of 1280: with IPv6 the pods get Backend.MTU minus 70.
        if (v6 != null && backend instanceof Vxlan x && x.mtu() > 0 && x.mtu() < IPV6_MIN_MTU + Vxlan.OVERHEAD_V6) {
            throw refused("Backend.MTU", x.mtu() + " is too small with EnableIPv6 (at least " + (IPV6_MIN_MTU + Vxlan.OVERHEAD_V6)
                    + ": pods get it minus " + Vxlan.OVERHEAD_V6 + ", and IPv6 needs 1280)");
        }
        return new NetworkConfig(v4, v6, backend);
    }

    private static Pool ipv4Pool(Map<String, Object> m) {
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
        return new Pool(network, len, min, max);
    }

    /** IPv6-only: flanneld still decodes the IPv4 keys into their Go types. */
    private static void ipv4KeysDecoded(Map<String, Object> m) {
        String net = Fields.string(m, "Network", "");
        if (net != null && !net.isEmpty() && (Cidr.tryParse(net) == null || Cidr.tryParse(net).isV6())) throw refused("Network", "not an IPv4 CIDR: " + net);
        Long len = Fields.integer(m, "SubnetLen", "");
        if (len != null && len < 0) throw refused("SubnetLen", "must not be negative: " + len);
        for (String k : new String[] {"SubnetMin", "SubnetMax"}) {
            String a = Fields.string(m, k, "");
            if (a != null && (IpAddr.tryParse(a) == null || IpAddr.tryParse(a).isV6())) throw refused(k, "not an IPv4 address: " + a);
        }
    }

    /**
     * flanneld's IPv6 rules (CheckNetworkConfig): IPv6Network required; IPv6SubnetLen default 64,
     * or the network's length + 2 for networks smaller than /62; at most 126 and at least the
     * network's + 2; IPv6SubnetMin/Max default the second and the last subnet, inside the network
     * and on a subnet boundary. Without EnableIPv6 the keys are only decoded.
     */
    private static Pool ipv6Pool(Map<String, Object> m, boolean enabled) {
        String v6net = Fields.string(m, "IPv6Network", "");
        Cidr c = null;
        if (v6net != null && !v6net.isEmpty()) {
            c = Cidr.tryParse(v6net);
            if (c == null || !c.isV6()) throw refused("IPv6Network", "not an IPv6 CIDR: " + v6net);
        }
        IpAddr givenMin = v6address(m, "IPv6SubnetMin"), givenMax = v6address(m, "IPv6SubnetMax");
        Long givenLen = Fields.integer(m, "IPv6SubnetLen", "");
        if (givenLen != null && givenLen < 0) throw refused("IPv6SubnetLen", "must not be negative: " + givenLen);
        if (!enabled) return null;
        if (c == null || (c.prefix() == 0 && c.network().equals(IpAddr.parse("::")))) {
            throw refused("IPv6Network", "please define a correct IPv6Network parameter in the flannel config");
        }
        Cidr network = c.masked();
        int len;
        if (givenLen != null && givenLen > 0) {
            if (givenLen > 126) throw refused("IPv6SubnetLen", "SubnetLen must be less than /127");
            if (givenLen < network.prefix() + 2) {
                throw refused("IPv6SubnetLen", "network must be able to accommodate at least four subnets (IPv6SubnetLen " + givenLen + " in " + network + ")");
            }
            len = givenLen.intValue();
        } else if (network.prefix() > 124) {
            throw refused("IPv6Network", "IPv6Network is too small. Minimum useful network prefix is /124");
        } else {
            len = network.prefix() <= 62 ? 64 : network.prefix() + 2;
        }
        BigInteger size = BigInteger.ONE.shiftLeft(128 - len);
        IpAddr min = v6bound("IPv6SubnetMin", givenMin, network, IpAddr.fromBigInteger(network.network().toBigInteger().add(size), true), len);
        IpAddr max = v6bound("IPv6SubnetMax", givenMax, network, IpAddr.fromBigInteger(network.last().toBigInteger().add(BigInteger.ONE).subtract(size), true), len);
        if (min.compareTo(max) > 0) throw refused("IPv6SubnetMin", min + " is above IPv6SubnetMax " + max + ": no subnet could be leased");
        return new Pool(network, len, min, max);
    }

    /** flanneld's *ip.IP6: absent, null or "::" mean unset; anything else must be an IPv6 address. */
    private static IpAddr v6address(Map<String, Object> m, String key) {
        String a = Fields.string(m, key, "");
        if (a == null) return null;
        IpAddr ip = IpAddr.tryParse(a);
        if (ip == null || !ip.isV6()) throw refused(key, "not an IPv6 address: " + a);
        return ip.equals(IpAddr.parse("::")) ? null : ip;
    }

    private static IpAddr v6bound(String key, IpAddr given, Cidr network, IpAddr dflt, int len) {
        if (given == null) return dflt;
        if (!network.contains(given)) throw refused(key, key + " is not in the range of the IPv6Network");
        if (!new Cidr(given, len).network().equals(given)) throw refused(key, key + " is not on a SubnetLen boundary: " + given);
        return given;
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

    /** The IPv4 pool's Network; null in an IPv6-only network. */
    public Cidr network() {
        return v4 == null ? null : v4.network();
    }

    public int subnetLen() {
        return v4.subnetLen();
    }

    public IpAddr subnetMin() {
        return v4.subnetMin();
    }

    public IpAddr subnetMax() {
        return v4.subnetMax();
    }

    /** How many IPv4 subnets can be leased. */
    public long capacity() {
        return v4.capacity();
    }

    /** The {@code i}-th leasable IPv4 subnet, from 0. */
    public Cidr subnet(long i) {
        return v4.subnet(i);
    }

    /** Whether {@code subnet} is one this config may lease (in the pool of its family). */
    public boolean leasable(Cidr subnet) {
        Pool p = subnet.isV6() ? v6 : v4;
        return p != null && p.leasable(subnet);
    }

    public boolean ipv4() {
        return v4 != null;
    }

    public boolean ipv6() {
        return v6 != null;
    }
}
