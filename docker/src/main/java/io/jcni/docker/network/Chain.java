package io.jcni.docker.network;

import io.jcni.types.Cidr;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CNI network list one endpoint is added with. Pure.
 *
 * <p>Addresses are always Docker's: whichever IPAM driver the network uses (jcni's or Docker's
 * default), libnetwork has already chosen the endpoint's addresses when it calls CreateEndpoint, and
 * its embedded DNS, /etc/hosts and {@code docker inspect} all use them. So the interface-making
 * plugin gets the {@code static} IPAM with exactly those addresses, and in a copied conflist any
 * other IPAM section is replaced the same way.
 *
 * <p>Masquerading and forwarding are the network's ({@link Forwarding}), so the generated bridge has
 * {@code ipMasq: false} and no per-container firewall is needed (add {@code firewall} to
 * {@code jcni.plugins} for CNI's per-container rules).
 *
 * <p>The default route is Docker's too: Join answers the gateway and libnetwork installs the route
 * on the one endpoint it picks as the container's gateway, so a container on two networks gets one
 * default route. The chain therefore never adds one (no {@code isDefaultGateway}, no 0.0.0.0/0 or
 * ::/0 in IPAM routes).
 */
public final class Chain {
    private Chain() {}

    public static final String CNI_VERSION = "1.1.0";

    public static NetConfList build(DockerNetwork net, Endpoint ep) {
        return build(net, ep, null);
    }

    /**
     * @param dataDir where bridge (masquerade), portmap and firewall keep their nftables ownership
     *                state; null for the plugins' default (/var/lib/cni/jcni/nft)
     */
    public static NetConfList build(DockerNetwork net, Endpoint ep, String dataDir) {
        Map<String, Object> list;
        if (net.conflist() != null) {
            list = Json.asObject(Json.deepCopy(net.conflist()));
            for (Object o : Json.asList(list.get("plugins"))) {
                Map<String, Object> p = Json.asObject(o);
                if (p.get("ipam") instanceof Map<?, ?> ipam) p.put("ipam", staticIpam(net, ep, routesOf(Json.asObject(ipam))));
                if (p.containsKey("isDefaultGateway")) p.put("isDefaultGateway", false);
            }
        } else {
            list = new LinkedHashMap<>();
            list.put("cniVersion", CNI_VERSION);
            List<Object> plugins = new ArrayList<>();
            for (String type : net.plugins()) {
                Map<String, Object> p = plugin(type, net, ep);
                if (dataDir != null && !type.equals("bandwidth") && !type.equals("tuning")) p.put("dataDir", dataDir);
                plugins.add(p);
            }
            list.put("plugins", plugins);
        }
        list.put("name", net.cniName());
        return NetConfList.parse(Json.write(list), "docker network " + net.id());
    }

    private static Map<String, Object> plugin(String type, DockerNetwork net, Endpoint ep) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", type);
        switch (type) {
            case "bridge" -> {
                p.put("bridge", net.bridge());
                p.put("isGateway", !net.internal());
                // Masquerading is per network, like Docker's bridge (Forwarding), not per container:
                // one rule when the network is created instead of an nftables transaction per Join.
                p.put("ipMasq", false);
                p.put("hairpinMode", true);
                if (net.mtu() > 0) p.put("mtu", (long) net.mtu());
                if (!ep.mac().isEmpty()) p.put("args", Map.of("cni", Map.of("mac", ep.mac())));
                p.put("ipam", staticIpam(net, ep, List.of()));
            }
            case "portmap" -> {
                p.put("capabilities", Map.of("portMappings", true));
                p.put("snat", true);
            }
            case "bandwidth" -> {
                p.put("capabilities", Map.of("bandwidth", true));
                p.putAll(net.bandwidth());
            }
            default -> { }
        }
        return p;
    }

    private static Map<String, Object> staticIpam(DockerNetwork net, Endpoint ep, List<Object> routes) {
        List<Object> addresses = new ArrayList<>();
        for (Cidr a : new Cidr[] {ep.address(), ep.addressV6()}) {
            if (a == null) continue;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("address", a.toString());
            Cidr gw = net.gateway(a.isV6());
            if (gw != null && !net.internal()) m.put("gateway", gw.address().toString());
            addresses.add(m);
        }
        Map<String, Object> ipam = new LinkedHashMap<>();
        ipam.put("type", "static");
        ipam.put("addresses", addresses);
        if (!routes.isEmpty()) ipam.put("routes", routes);
        return ipam;
    }

    /** A copied IPAM section's routes, less default routes (Docker installs the default route). */
    private static List<Object> routesOf(Map<String, Object> ipam) {
        List<Object> out = new ArrayList<>();
        if (!(ipam.get("routes") instanceof List<?> l)) return out;
        for (Object o : l) {
            if (o instanceof Map<?, ?> r && r.get("dst") instanceof String dst) {
                Cidr c = Cidr.tryParse(dst);
                if (c != null && c.prefix() == 0) continue;
            }
            out.add(o);
        }
        return out;
    }
}
