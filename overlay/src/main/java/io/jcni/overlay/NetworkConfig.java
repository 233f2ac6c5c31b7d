package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.Map;

/**
 * flannel's network configuration, the JSON at {@code <prefix>/config}:
 * <pre>{"Network":"10.5.0.0/16","SubnetLen":24,"SubnetMin":"10.5.1.0","SubnetMax":"10.5.254.0",
 *  "Backend":{"Type":"vxlan","VNI":1,"Port":8472}}</pre>
 * Defaults as flanneld's: SubnetLen 24 unless Network is smaller than a /22, then Network's length
 * plus 2; SubnetMin the second subnet of Network (flannel skips the first); SubnetMax the last one.
 * Backend type vxlan when absent (flanneld's own default, udp, is still registered upstream and
 * documented there for debugging only; its TUN device and user-space proxy are not offered here).
 *
 * @param subnetMin the first subnet's network address that may be leased
 * @param subnetMax the last subnet's network address that may be leased
 */
public record NetworkConfig(Cidr network, int subnetLen, IpAddr subnetMin, IpAddr subnetMax, Backend backend) {

    /** The closed set of backends. */
    public sealed interface Backend permits Vxlan, HostGw {
        /** flannel's {@code BackendType} in leases. */
        String type();

        /** Bytes of encapsulation subtracted from the underlay MTU for pods (FLANNEL_MTU). */
        int overhead();
    }

    /** VXLAN: flannel's defaults are VNI 1 and the Linux default port 8472; learning off. */
    public record Vxlan(int vni, int port) implements Backend {
        public String type() {
            return "vxlan";
        }

        public int overhead() {
            return 50; // outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8
        }

        public String device() {
            return "flannel." + vni;
        }
    }

    /** host-gw: plain routes via the other hosts' addresses; they must share an L2 segment. */
    public record HostGw() implements Backend {
        public String type() {
            return "host-gw";
        }

        public int overhead() {
            return 0;
        }
    }

    /** Parses and validates; {@link IllegalArgumentException} with a message for the log on anything wrong. */
    public static NetworkConfig parse(String json) {
        Map<String, Object> m;
        try {
            m = Json.parseObject(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("network config is not a JSON object: " + e.getMessage());
        }
        if (!(m.get("Network") instanceof String net)) throw new IllegalArgumentException("network config: Network (a CIDR string) is required");
        Cidr c = Cidr.tryParse(net);
        if (c == null || c.isV6()) throw new IllegalArgumentException("network config: Network must be an IPv4 CIDR: " + net);
        Cidr network = c.masked();
        int len = (int) number(m, "SubnetLen", 0);
        if (len == 0) len = network.prefix() <= 22 ? 24 : network.prefix() + 2;
        if (len < network.prefix() || len > 30) {
            throw new IllegalArgumentException("network config: SubnetLen " + len + " does not fit in " + network + " (must be " + network.prefix() + "..30)");
        }
        long size = 1L << (32 - len);
        IpAddr min = address(m, "SubnetMin", network, network.network().add(size));
        IpAddr max = address(m, "SubnetMax", network, network.last().add(1 - size));
        if (min.compareTo(max) > 0) throw new IllegalArgumentException("network config: SubnetMin " + min + " is above SubnetMax " + max);
        return new NetworkConfig(network, len, new Cidr(min, len).network(), new Cidr(max, len).network(), backend(m.get("Backend")));
    }

    private static Backend backend(Object b) {
        if (b == null) return new Vxlan(1, 8472);
        if (!(b instanceof Map<?, ?> raw)) throw new IllegalArgumentException("network config: Backend must be an object");
        Map<String, Object> m = Json.asObject(raw);
        Object type = m.getOrDefault("Type", "vxlan");
        return switch (String.valueOf(type)) {
            case "vxlan" -> {
                int vni = (int) number(m, "VNI", 1);
                int port = (int) number(m, "Port", 8472);
                if (vni < 1 || vni > 0xFFFFFF) throw new IllegalArgumentException("network config: VNI out of range: " + vni);
                if (port < 1 || port > 65535) throw new IllegalArgumentException("network config: Port out of range: " + port);
                yield new Vxlan(vni, port);
            }
            case "host-gw" -> new HostGw();
            default -> throw new IllegalArgumentException("network config: backend type " + type + " is not supported (vxlan, host-gw)");
        };
    }

    private static long number(Map<String, Object> m, String key, long dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Long l) return l;
        throw new IllegalArgumentException("network config: " + key + " must be an integer");
    }

    private static IpAddr address(Map<String, Object> m, String key, Cidr network, IpAddr dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        IpAddr a = v instanceof String s ? IpAddr.tryParse(s) : null;
        if (a == null || a.isV6()) throw new IllegalArgumentException("network config: " + key + " must be an IPv4 address");
        if (!network.contains(a)) throw new IllegalArgumentException("network config: " + key + " " + a + " is not in " + network);
        return a;
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
