package io.jcni.docker.cluster;

import io.jcni.docker.store.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A cluster network's definition, shared by its hosts ({@code clusters/NAME/network}): what every
 * host's {@code docker network create ... -o jcni.cluster=NAME} must agree on, and the VNI the
 * first host chose.
 */
public record ClusterNetwork(String name, int vni, Cidr subnet, Cidr range, IpAddr gateway, boolean internal) {

    /** What differs between this definition and the one another host asks for (empty: the same network). */
    public List<String> differences(ClusterNetwork asked) {
        List<String> out = new ArrayList<>();
        if (!subnet.equals(asked.subnet)) out.add("subnet " + asked.subnet + " (the cluster network has " + subnet + ")");
        if (!range.equals(asked.range)) out.add("ip-range " + asked.range + " (the cluster network has " + range + ")");
        if (!java.util.Objects.equals(gateway, asked.gateway)) out.add("gateway " + asked.gateway + " (the cluster network has " + gateway + ")");
        if (internal != asked.internal) out.add((asked.internal ? "--internal" : "not --internal") + " (the cluster network is " + (internal ? "" : "not ") + "internal)");
        return out;
    }

    public ClusterNetwork withVni(int v) {
        return new ClusterNetwork(name, v, subnet, range, gateway, internal);
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("vni", (long) vni);
        m.put("subnet", subnet.toString());
        m.put("range", range.toString());
        if (gateway != null) m.put("gateway", gateway.toString());
        m.put("internal", internal);
        return m;
    }

    public static ClusterNetwork fromJson(StateDoc d) {
        String gw = d.optString("gateway");
        return new ClusterNetwork(d.string("name"), (int) d.integer("vni", 1, (1 << 24) - 1), d.cidr("subnet"), d.cidr("range"),
                gw == null ? null : IpAddr.parse(gw), d.bool("internal"));
    }
}
