package io.jcni.plugins.meta.flannel;

import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * flanneld's {@code subnet.env} (also written by jcni's overlay agent). IPv4, dual-stack or IPv6-only:
 * <pre>
 * FLANNEL_NETWORK=10.5.0.0/16
 * FLANNEL_SUBNET=10.5.1.1/24
 * FLANNEL_IPV6_NETWORK=fc00::/48
 * FLANNEL_IPV6_SUBNET=fc00:0:0:1::1/64
 * FLANNEL_MTU=1450
 * FLANNEL_IPMASQ=false
 * </pre>
 * A subnet is written as its first host address (the bridge's) with the subnet's length. A network
 * may be several, comma-separated (flanneld with several cluster CIDRs); each gets a route.
 *
 * @param networks FLANNEL_NETWORK's networks; empty in an IPv6-only file
 * @param subnet FLANNEL_SUBNET as written (host bits kept); {@code subnet.masked()} is the subnet; null when absent
 * @param ipv6Networks FLANNEL_IPV6_NETWORK's networks; empty when absent
 * @param ipv6Subnet FLANNEL_IPV6_SUBNET as written, or null
 */
public record SubnetFile(List<Cidr> networks, Cidr subnet, List<Cidr> ipv6Networks, Cidr ipv6Subnet, int mtu, boolean ipMasq) {

    public SubnetFile {
        networks = List.copyOf(networks);
        ipv6Networks = List.copyOf(ipv6Networks);
    }

    /** An IPv4-only file. */
    public SubnetFile(Cidr network, Cidr subnet, int mtu, boolean ipMasq) {
        this(List.of(network), subnet, List.of(), null, mtu, ipMasq);
    }

    /** The first IPv4 network, or null in an IPv6-only file. */
    public Cidr network() {
        return networks.isEmpty() ? null : networks.getFirst();
    }

    /** The file's text, in flanneld's order (IPv4 lines, IPv6 lines, MTU, IPMASQ); subnets may be given masked. */
    public String format() {
        StringBuilder b = new StringBuilder();
        if (!networks.isEmpty()) b.append("FLANNEL_NETWORK=").append(joined(networks)).append('\n');
        if (subnet != null) b.append("FLANNEL_SUBNET=").append(firstHost(subnet)).append('\n');
        if (!ipv6Networks.isEmpty()) b.append("FLANNEL_IPV6_NETWORK=").append(joined(ipv6Networks)).append('\n');
        if (ipv6Subnet != null) b.append("FLANNEL_IPV6_SUBNET=").append(firstHost(ipv6Subnet)).append('\n');
        return b.append("FLANNEL_MTU=").append(mtu).append('\n').append("FLANNEL_IPMASQ=").append(ipMasq).append('\n').toString();
    }

    private static Cidr firstHost(Cidr c) {
        return new Cidr(c.network().next(), c.prefix());
    }

    private static String joined(List<Cidr> nets) {
        List<String> s = new ArrayList<>();
        for (Cidr c : nets) s.add(c.masked().toString());
        return String.join(",", s);
    }

    /**
     * Reads it as the reference flannel plugin does: unknown lines ignored, IPMASQ true only for
     * "true", a network and a subnet of either family required (IPv6-only is fine), and an error
     * naming every missing variable.
     */
    public static SubnetFile parse(String text, String fileName) {
        List<Cidr> nets = null, nets6 = null;
        Cidr sub = null, sub6 = null;
        Integer mtu = null;
        Boolean masq = null;
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq < 0) continue;
            String k = line.substring(0, eq), v = line.substring(eq + 1).trim();
            switch (k) {
                case "FLANNEL_NETWORK" -> nets = cidrs(fileName, k, v, false);
                case "FLANNEL_SUBNET" -> sub = cidr(fileName, k, v, false);
                case "FLANNEL_IPV6_NETWORK" -> nets6 = cidrs(fileName, k, v, true);
                case "FLANNEL_IPV6_SUBNET" -> sub6 = cidr(fileName, k, v, true);
                case "FLANNEL_MTU" -> {
                    try {
                        mtu = Integer.parseInt(v);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(fileName + ": FLANNEL_MTU is not a number: " + v);
                    }
                }
                case "FLANNEL_IPMASQ" -> masq = v.equals("true");
                default -> { }
            }
        }
        List<String> missing = new ArrayList<>();
        if (nets == null && nets6 == null) missing.addAll(List.of("FLANNEL_NETWORK", "FLANNEL_IPV6_NETWORK"));
        if (sub == null && sub6 == null) missing.addAll(List.of("FLANNEL_SUBNET", "FLANNEL_IPV6_SUBNET"));
        if (mtu == null) missing.add("FLANNEL_MTU");
        if (masq == null) missing.add("FLANNEL_IPMASQ");
        if (!missing.isEmpty()) throw new IllegalArgumentException(fileName + " is missing " + String.join(", ", missing));
        return new SubnetFile(nets == null ? List.of() : nets, sub, nets6 == null ? List.of() : nets6, sub6, mtu, masq);
    }

    private static List<Cidr> cidrs(String file, String key, String v, boolean v6) {
        List<Cidr> out = new ArrayList<>();
        for (String s : v.split(",")) if (!s.isBlank()) out.add(cidr(file, key, s.trim(), v6));
        if (out.isEmpty()) throw new IllegalArgumentException(file + ": " + key + " is empty");
        return out;
    }

    private static Cidr cidr(String file, String key, String v, boolean v6) {
        Cidr c = Cidr.tryParse(v);
        if (c == null) throw new IllegalArgumentException(file + ": " + key + " is not a CIDR: " + v);
        if (c.isV6() != v6) throw new IllegalArgumentException(file + ": " + key + " is not an IPv" + (v6 ? "6" : "4") + " CIDR: " + v);
        return c;
    }
}
