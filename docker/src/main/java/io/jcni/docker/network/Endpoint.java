package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.NetworkCalls.PortBinding;
import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An endpoint (kind "endpoints"): its addresses from CreateEndpoint and, once joined, where it is.
 *
 * @param sandboxKey the container's network namespace; null until Join (written before the ADD runs,
 *                   so that a crash in the middle leaves something to clean up)
 * @param ifName     the container interface's name outside the sandbox (Join's InterfaceName.SrcName)
 * @param ports      the published ports as libnetwork sent them (for EndpointOperInfo)
 * @param joinedMillis when Join recorded it (epoch ms; 0 when not joined)
 */
public record Endpoint(String id, String networkId, Cidr address, Cidr addressV6, String mac, String sandboxKey, String ifName,
        List<Map<String, Object>> ports, long joinedMillis) {

    public Endpoint {
        ports = ports == null ? List.of() : List.copyOf(ports);
    }

    public boolean joined() {
        return sandboxKey != null;
    }

    /** Not joined yet. */
    public Endpoint(String id, String networkId, Cidr address, Cidr addressV6, String mac) {
        this(id, networkId, address, addressV6, mac, null, null, List.of(), 0);
    }

    public Endpoint joinedAt(String key, String ifn, long millis) {
        return new Endpoint(id, networkId, address, addressV6, mac, key, ifn, List.of(), millis);
    }

    public Endpoint left() {
        return new Endpoint(id, networkId, address, addressV6, mac);
    }

    public Endpoint withPorts(List<Map<String, Object>> p) {
        return new Endpoint(id, networkId, address, addressV6, mac, sandboxKey, ifName, p, joinedMillis);
    }

    /** The published ports, decoded (checked when they were received and when they were loaded). */
    public List<PortBinding> bindings() {
        return ports.stream().map(PortBinding::fromRaw).toList();
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("networkId", networkId);
        if (address != null) m.put("address", address.toString());
        if (addressV6 != null) m.put("addressV6", addressV6.toString());
        if (!mac.isEmpty()) m.put("mac", mac);
        if (sandboxKey != null) m.put("sandboxKey", sandboxKey);
        if (ifName != null) m.put("ifName", ifName);
        m.put("ports", new ArrayList<Object>(ports));
        if (joinedMillis != 0) m.put("joinedMillis", joinedMillis);
        return m;
    }

    public static Endpoint fromJson(StateDoc d) {
        List<Map<String, Object>> ports = new ArrayList<>();
        for (StateDoc p : d.objects("ports")) {
            try {
                PortBinding.fromRaw(p.fields());
            } catch (DriverException e) {
                throw d.damaged("ports", e.getMessage());
            }
            ports.add(p.fields());
        }
        String key = d.optString("sandboxKey"), ifName = d.optString("ifName");
        if ((key == null) != (ifName == null)) throw d.damaged(key == null ? "sandboxKey" : "ifName", "missing (a joined endpoint has both)");
        String mac = d.optString("mac");
        return new Endpoint(d.string("id"), d.string("networkId"), d.optCidr("address"), d.optCidr("addressV6"), mac == null ? "" : mac,
                key, ifName, ports, d.integer("joinedMillis", 0, Long.MAX_VALUE, 0));
    }
}
