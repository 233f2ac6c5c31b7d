package io.jcni.docker.network;

import io.jcni.types.Cidr;
import io.jcni.types.Json;
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

    public static Endpoint fromJson(Map<String, Object> m) {
        List<Map<String, Object>> ports = new ArrayList<>();
        for (Object o : Json.asList(m.get("ports"))) ports.add(Json.asObject(o));
        return new Endpoint((String) m.get("id"), (String) m.get("networkId"), cidr(m.get("address")), cidr(m.get("addressV6")),
                m.get("mac") == null ? "" : (String) m.get("mac"), (String) m.get("sandboxKey"), (String) m.get("ifName"), ports,
                m.get("joinedMillis") instanceof Long l ? l : 0L);
    }

    private static Cidr cidr(Object o) {
        return o == null ? null : Cidr.parse((String) o);
    }
}
