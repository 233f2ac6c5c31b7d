package io.jcni.docker.cluster;

import io.jcni.types.StateDoc;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A container on a cluster network as its host publishes it ({@code clusters/NAME/endpoints/EP}):
 * what every other host needs to reach it, a static FDB entry (MAC to VTEP) and a neighbour entry
 * per address (address to MAC) on its VXLAN device.
 *
 * @param endpointId Docker's endpoint ID
 * @param host       the publishing host's key ({@link ClusterKeys#host})
 * @param mac        the container interface's MAC
 * @param addresses  the container's addresses
 * @param vtep       the host's underlay address, where its VXLAN packets go
 */
public record Peer(String endpointId, String host, String mac, List<IpAddr> addresses, IpAddr vtep) {

    public Peer {
        addresses = List.copyOf(addresses);
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", endpointId);
        m.put("host", host);
        m.put("mac", mac);
        List<Object> a = new ArrayList<>();
        for (IpAddr ip : addresses) a.add(ip.toString());
        m.put("addresses", a);
        m.put("vtep", vtep.toString());
        return m;
    }

    public static Peer fromJson(StateDoc d) {
        String mac = d.string("mac");
        if (!mac.matches("(?i)[0-9a-f]{2}(:[0-9a-f]{2}){5}")) throw d.damaged("mac", "not a MAC address: " + mac);
        return new Peer(d.string("id"), d.string("host"), mac.toLowerCase(java.util.Locale.ROOT), d.addresses("addresses"),
                IpAddr.parse(d.string("vtep")));
    }
}
