package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.NetworkCalls.EndpointRef;
import io.jcni.docker.store.StateStore;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * What the driver recorded: its networks and endpoints, in memory and in the state store (each
 * change written through), and the lock of each network that calls on it hold.
 */
final class DriverRecords {
    static final String NETWORKS = "networks";
    static final String ENDPOINTS = "endpoints";

    private final StateStore store;
    private final Map<String, DockerNetwork> networks = new ConcurrentHashMap<>();
    private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
    private final Map<String, ReentrantLock> locks = new ConcurrentHashMap<>();

    /** Loads what {@code store} holds; a damaged document is moved aside and named on {@code report}, the rest is served. */
    DriverRecords(StateStore store, Consumer<String> report) {
        this.store = store;
        networks.putAll(store.load(NETWORKS, DockerNetwork::fromJson, DockerNetwork::id, report));
        endpoints.putAll(store.load(ENDPOINTS, Endpoint::fromJson, Endpoint::id, report));
    }

    /** Every network (a live view). */
    Collection<DockerNetwork> networks() {
        return networks.values();
    }

    /** Every endpoint (a live view). */
    Collection<Endpoint> endpoints() {
        return endpoints.values();
    }

    /** A copy of the networks, by ID. */
    Map<String, DockerNetwork> networksById() {
        return Map.copyOf(networks);
    }

    /** A copy of the endpoints, by ID. */
    Map<String, Endpoint> endpointsById() {
        return Map.copyOf(endpoints);
    }

    /** The network {@code id}, or null. */
    DockerNetwork network(String id) {
        return networks.get(id);
    }

    /** The endpoint {@code id}, or null. */
    Endpoint endpoint(String id) {
        return endpoints.get(id);
    }

    /** The network {@code id}; none is an error of {@code call}. */
    DockerNetwork network(String call, String id) {
        DockerNetwork n = networks.get(id);
        if (n == null) throw new DriverException(call + ": no network " + id + " in the jcni driver");
        return n;
    }

    /** The endpoint {@code r} names, in the network it names; none is an error of {@code call}. */
    Endpoint endpoint(String call, EndpointRef r) {
        Endpoint e = endpoints.get(r.endpointId());
        if (e == null || !e.networkId().equals(r.networkId())) {
            throw new DriverException(call + ": no endpoint " + r.endpointId() + " in network " + r.networkId());
        }
        return e;
    }

    void save(DockerNetwork n) {
        store.put(NETWORKS, n.id(), n.toJson());
        networks.put(n.id(), n);
    }

    void save(Endpoint e) {
        store.put(ENDPOINTS, e.id(), e.toJson());
        endpoints.put(e.id(), e);
    }

    void delete(DockerNetwork n) {
        store.delete(NETWORKS, n.id());
        networks.remove(n.id());
    }

    void delete(Endpoint e) {
        store.delete(ENDPOINTS, e.id());
        endpoints.remove(e.id());
    }

    /** Takes the lock of network {@code networkId}; the caller unlocks it. */
    ReentrantLock lock(String networkId) {
        ReentrantLock l = locks.computeIfAbsent(networkId, k -> new ReentrantLock());
        l.lock();
        return l;
    }
}
