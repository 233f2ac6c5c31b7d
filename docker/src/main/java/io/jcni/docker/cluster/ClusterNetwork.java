package io.jcni.docker.cluster;

import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A cluster network's definition, shared by its hosts ({@code clusters/NAME/network}): what every
 * host's {@code docker network create ... -o jcni.cluster=NAME} must agree on, and the VNI the
 * first host chose.
 *
 * @param v4 the IPv4 subnet (dockerd always gives one)
 * @param v6 the IPv6 subnet of a network created with {@code --ipv6}; null for an IPv4-only network
 *           (and for definitions written before cluster networks had IPv6)
 */
public record ClusterNetwork(String name, int vni, Subnet v4, Subnet v6, boolean internal) {

    /**
     * One address family's part of the definition.
     *
     * @param range   where container addresses come from ({@code --ip-range}; else the subnet)
     * @param gateway the gateway address, which every host has on its own bridge; null for none
     */
    public record Subnet(Cidr subnet, Cidr range, IpAddr gateway) {}

    public ClusterNetwork {
        Objects.requireNonNull(v4, "v4");
    }

    /** The subnet of one family; null when the network has no IPv6. */
    public Subnet subnet(boolean ipv6) {
        return ipv6 ? v6 : v4;
    }

    /** What differs between this definition and the one another host asks for (empty: the same network). */
    public List<String> differences(ClusterNetwork asked) {
        List<String> out = new ArrayList<>();
        compare("", v4, asked.v4, out);
        if (v6 == null && asked.v6 != null) out.add("IPv6 subnet " + asked.v6.subnet + " (the cluster network has no IPv6)");
        else if (v6 != null && asked.v6 == null) out.add("no IPv6 subnet (the cluster network has " + v6.subnet + ")");
        else if (v6 != null) compare("IPv6 ", v6, asked.v6, out);
        if (internal != asked.internal) out.add((asked.internal ? "--internal" : "not --internal") + " (the cluster network is " + (internal ? "" : "not ") + "internal)");
        return out;
    }

    private static void compare(String family, Subnet have, Subnet asked, List<String> out) {
        if (!have.subnet.equals(asked.subnet)) out.add(family + "subnet " + asked.subnet + " (the cluster network has " + have.subnet + ")");
        if (!have.range.equals(asked.range)) out.add(family + "ip-range " + asked.range + " (the cluster network has " + have.range + ")");
        if (!Objects.equals(have.gateway, asked.gateway)) out.add(family + "gateway " + asked.gateway + " (the cluster network has " + have.gateway + ")");
    }

    public ClusterNetwork withVni(int v) {
        return new ClusterNetwork(name, v, v4, v6, internal);
    }

    /** IPv4 under {@code subnet}, {@code range}, {@code gateway} (as before IPv6), IPv6 under the same keys with a 6. */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("vni", (long) vni);
        put(m, "", v4);
        if (v6 != null) put(m, "6", v6);
        m.put("internal", internal);
        return m;
    }

    private static void put(Map<String, Object> m, String suffix, Subnet s) {
        m.put("subnet" + suffix, s.subnet.toString());
        m.put("range" + suffix, s.range.toString());
        if (s.gateway != null) m.put("gateway" + suffix, s.gateway.toString());
    }

    public static ClusterNetwork fromJson(StateDoc d) {
        Subnet v6 = d.optCidr("subnet6") == null ? null : subnet(d, "6");
        return new ClusterNetwork(d.string("name"), (int) d.integer("vni", 1, (1 << 24) - 1), subnet(d, ""), v6, d.bool("internal"));
    }

    private static Subnet subnet(StateDoc d, String suffix) {
        Cidr subnet = d.cidr("subnet" + suffix), range = d.cidr("range" + suffix);
        if (subnet.isV6() != suffix.equals("6")) throw d.damaged("subnet" + suffix, "of the wrong address family: " + subnet);
        if (!subnet.contains(range.network())) throw d.damaged("range" + suffix, range + " is not inside " + subnet);
        String gw = d.optString("gateway" + suffix);
        return new Subnet(subnet, range, gw == null ? null : IpAddr.parse(gw));
    }
}
