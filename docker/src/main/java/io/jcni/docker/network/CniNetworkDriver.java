package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.NetworkCalls.AllocateNetwork;
import io.jcni.docker.api.NetworkCalls.CreateEndpoint;
import io.jcni.docker.api.NetworkCalls.CreateNetwork;
import io.jcni.docker.api.NetworkCalls.Discovery;
import io.jcni.docker.api.NetworkCalls.EndpointRef;
import io.jcni.docker.api.NetworkCalls.Join;
import io.jcni.docker.api.NetworkCalls.JoinAnswer;
import io.jcni.docker.api.NetworkCalls.NetworkRef;
import io.jcni.docker.api.NetworkCalls.PortBinding;
import io.jcni.docker.api.NetworkCalls.ProgramExternalConnectivity;
import io.jcni.docker.api.NetworkDriver;
import io.jcni.docker.store.StateStore;
import io.jcni.runtime.RuntimeConf;
import io.jcni.types.Cidr;
import io.jcni.types.NetConfList;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The NetworkDriver: a Docker network is a CNI network list ({@link Chain}), an endpoint is one CNI
 * attachment (container ID = endpoint ID, netns = SandboxKey), Join is ADD and Leave is DEL.
 * Calls on one network run one at a time; calls on different networks run in parallel, except
 * what must be checked against every network at once: creating and deleting networks (bridge names,
 * subnets) hold one driver-wide lock ({@code topology}), publishing ports another ({@code ports}).
 * Locks are taken in the order topology, then the network's own lock, then ports.
 *
 * <p>Ownership: the driver deletes only what it made and recorded as its own, so {@code docker
 * network rm} never takes away a bridge, an address or a rule that was there before.
 */
public final class CniNetworkDriver implements NetworkDriver {
    private final DriverRecords records;
    private final Attacher attacher;
    private final Function<String, Map<String, Object>> conflists;
    private final String scope;
    private final PrintStream log;
    private volatile String dataDir;
    private volatile ClusterMembership cluster;
    /** Held around every check-then-record of networks (CreateNetwork) and their removal (DeleteNetwork). */
    private final ReentrantLock topology = new ReentrantLock();
    /** Held around every check-then-publish of host ports. */
    private final ReentrantLock ports = new ReentrantLock();

    /**
     * @param conflists loads {@code -o jcni.conflist=NAME} from the CNI configuration directory
     * @param scope     "local" (the default) or "global"
     */
    public CniNetworkDriver(StateStore store, Attacher attacher, Function<String, Map<String, Object>> conflists, String scope,
            PrintStream log) {
        this.attacher = attacher;
        this.conflists = conflists;
        this.scope = scope;
        this.log = log;
        // A damaged document is moved aside and named in the log; the rest is served.
        this.records = new DriverRecords(store, this::note);
    }

    /** Lets networks with {@code -o jcni.cluster=NAME} be created (jcnid with --etcd-endpoints). */
    public void cluster(ClusterMembership c) {
        cluster = c;
    }

    private ClusterMembership membership(String call) {
        ClusterMembership c = cluster;
        if (c == null) {
            throw new DriverException(call + ": " + DockerNetwork.OPT_CLUSTER + " needs the driver's shared store: start jcnid with --etcd-endpoints "
                    + "(and --iface or --public-ip for the VXLAN underlay)");
        }
        return c;
    }

    /**
     * After a restart: an endpoint whose sandbox is gone (its container ended while the driver was
     * down) gets its CNI DEL now, so no veth, address or port mapping outlives it ({@link RestartReconcile}).
     *
     * @return how many attachments were cleaned up
     */
    public int reconcile() {
        return reconcileAt(System.currentTimeMillis());
    }

    /** {@link #reconcile()} as if it were {@code nowMillis}. */
    public int reconcileAt(long nowMillis) {
        return RestartReconcile.run(records, attacher, cluster, dataDir, nowMillis, this::note);
    }

    @Override
    public String scope() {
        return scope;
    }

    @Override
    public void createNetwork(CreateNetwork r) {
        DockerNetwork n = DockerNetwork.fromCreate(r, conflists);
        topology.lock();
        ReentrantLock l = records.lock(r.networkId());
        try {
            if (records.network(n.id()) != null) return; // a repeated call: the network is there already
            Optional<Attacher.HostLink> existing = n.linuxBridge() == null ? Optional.empty() : attacher.hostLink(n.linuxBridge());
            Conflicts.checkBridge(n, records.networks(), existing);
            Conflicts.checkSubnets(n, records.networks(), attacher.hostRoutes(), existing.isPresent());
            if (n.conflist() == null) {
                DockerNetwork asked = n;
                n = asked.withBridgeOwnership(existing.isEmpty(), existing.map(h -> Conflicts.lentAddresses(asked, h)).orElse(List.of()));
            }
            if (n.cluster() != null) {
                ClusterMembership c = membership("CreateNetwork");
                int mtu = c.mtu();
                if (n.mtu() > mtu) {
                    throw new DriverException("CreateNetwork: " + DockerNetwork.OPT_MTU + "=" + n.mtu() + " does not fit through the VXLAN underlay (at most " + mtu + ")");
                }
                n = n.withMtu(n.mtu() == 0 ? mtu : n.mtu());
                c.join(n);
            }
            if (n.linuxBridge() != null) attacher.openNetwork(n.linuxBridge(), n.internal(), n.masqueraded());
            records.save(n);
            if (existing.isPresent()) note("network=" + n.id() + " bridge=" + n.linuxBridge() + " existed: used, and left in place at removal");
        } finally {
            l.unlock();
            topology.unlock();
        }
    }

    @Override
    public void deleteNetwork(NetworkRef r) {
        topology.lock();
        ReentrantLock l = records.lock(r.networkId());
        try {
            DockerNetwork n = records.network(r.networkId());
            if (n == null) return;
            for (Endpoint e : List.copyOf(records.endpoints())) {
                if (!e.networkId().equals(n.id())) continue;
                if (e.joined()) leaveLocked(n, e);
                records.delete(e);
            }
            // The chain with a placeholder endpoint: GC needs only the plugins and the network name.
            Endpoint none = new Endpoint("gc", n.id(), null, null, "");
            boolean shared = records.networks().stream().anyMatch(o -> !o.id().equals(n.id()) && n.linuxBridge() != null
                    && n.linuxBridge().equals(o.linuxBridge()));
            if (n.cluster() != null && cluster != null) cluster.leave(n);
            attacher.removeNetwork(chain(n, none), new Attacher.Teardown(n.linuxBridge(), n.internal(), n.masqueraded(), !shared,
                    n.conflist() == null && n.ownsBridge() && !shared, n.lentAddresses()));
            records.delete(n);
        } finally {
            l.unlock();
            topology.unlock();
        }
    }

    @Override
    public Map<String, String> allocateNetwork(AllocateNetwork r) {
        return Map.of(); // called for swarm (global) networks only; cluster networks share their state through etcd instead
    }

    @Override
    public void freeNetwork(NetworkRef r) {
    }

    @Override
    public void createEndpoint(CreateEndpoint r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            DockerNetwork n = records.network("CreateEndpoint", r.networkId());
            if (r.iface().address() == null && r.iface().addressV6() == null) {
                throw new DriverException("CreateEndpoint: Interface has no Address: jcni uses the addresses of the network's IPAM driver");
            }
            String mac = r.iface().macAddress();
            // On a cluster network every host must know a container's MAC: it follows from the (cluster-wide unique) address.
            if (mac.isEmpty() && n.cluster() != null && r.iface().address() != null) mac = io.jcni.docker.cluster.ClusterKeys.macFor(r.iface().address().address());
            Endpoint e = new Endpoint(r.endpointId(), r.networkId(), r.iface().address(), r.iface().addressV6(), mac);
            Endpoint old = records.endpoint(e.id());
            if (old != null) {
                if (old.networkId().equals(e.networkId()) && java.util.Objects.equals(old.address(), e.address())) return;
                throw new DriverException("CreateEndpoint: endpoint " + e.id() + " exists already with other settings");
            }
            records.save(e);
        } finally {
            l.unlock();
        }
    }

    @Override
    public Map<String, Object> endpointOperInfo(EndpointRef r) {
        Endpoint e = records.endpoint("EndpointOperInfo", r);
        Map<String, Object> v = new LinkedHashMap<>();
        if (!e.ports().isEmpty()) v.put("com.docker.network.portmap", new ArrayList<Object>(e.ports()));
        if (e.joined()) v.put("jcni.interface", e.ifName());
        return v;
    }

    @Override
    public void deleteEndpoint(EndpointRef r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            Endpoint e = records.endpoint(r.endpointId());
            if (e == null) return; // deleting twice is not an error
            DockerNetwork n = records.network(e.networkId());
            if (e.joined() && n != null) leaveLocked(n, e);
            // libnetwork may hand the interface back after Leave, so it is looked for once more here.
            attacher.dropInterface(srcName(e.id()), true);
            records.delete(e);
        } finally {
            l.unlock();
        }
    }

    @Override
    public JoinAnswer join(Join r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            DockerNetwork n = records.network("Join", r.networkId());
            Endpoint e = records.endpoint("Join", new EndpointRef(r.networkId(), r.endpointId()));
            if (e.joined() && !e.sandboxKey().equals(r.sandboxKey())) {
                throw new DriverException("Join: endpoint " + e.id() + " is already joined to " + e.sandboxKey());
            }
            if (!e.joined()) {
                Endpoint joined = e.joinedAt(r.sandboxKey(), srcName(e.id()), System.currentTimeMillis());
                records.save(joined); // first, so that a crash during ADD leaves a record for reconcile
                try {
                    attacher.add(chain(n, joined), runtime(joined, ""), joined.ifName());
                    if (n.cluster() != null) membership("Join").publish(n, joined);
                } catch (RuntimeException ex) {
                    try {
                        attacher.del(chain(n, joined), runtime(joined, ""), joined.ifName());
                    } catch (RuntimeException ignored) {
                        // the ADD's error is the one to report
                    }
                    records.save(e);
                    throw ex;
                }
                e = joined;
            }
            Cidr gw4 = n.internal() ? null : n.gateway(false);
            Cidr gw6 = n.internal() || !n.ipv6() ? null : n.gateway(true);
            // DisableGatewayService: never attach the container to docker_gwbridge; our chain is its way out.
            return new JoinAnswer(e.ifName(), gw4 == null ? null : gw4.address(), gw6 == null ? null : gw6.address(), true);
        } finally {
            l.unlock();
        }
    }

    @Override
    public void leave(EndpointRef r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            Endpoint e = records.endpoint("Leave", r);
            if (!e.joined()) return;
            leaveLocked(records.network("Leave", r.networkId()), e);
        } finally {
            l.unlock();
        }
    }

    private void leaveLocked(DockerNetwork n, Endpoint e) {
        if (n.cluster() != null && cluster != null) cluster.withdraw(n, e);
        attacher.del(chain(n, e), runtime(e, ""), e.ifName());
        records.save(e.left());
    }

    @Override
    public void programExternalConnectivity(ProgramExternalConnectivity r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            DockerNetwork n = records.network("ProgramExternalConnectivity", r.networkId());
            Endpoint e = records.endpoint("ProgramExternalConnectivity", new EndpointRef(r.networkId(), r.endpointId()));
            if (!e.joined()) throw new DriverException("ProgramExternalConnectivity: endpoint " + e.id() + " is not joined");
            if (r.ports().isEmpty()) return;
            List<Map<String, Object>> mappings = new ArrayList<>();
            List<Map<String, Object>> raw = new ArrayList<>();
            for (PortBinding p : r.ports()) {
                if (p.hostPort() == 0) {
                    throw new DriverException("ProgramExternalConnectivity: port " + p.containerPort() + "/" + p.protocol()
                            + " has no host port; jcni publishes only -p HOSTPORT:PORT (no -P or random host ports yet)");
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("hostPort", (long) p.hostPort());
                m.put("containerPort", (long) p.containerPort());
                m.put("protocol", p.protocol());
                if (!p.hostIp().isEmpty()) m.put("hostIP", p.hostIp());
                mappings.add(m);
                raw.add(p.raw());
            }
            ports.lock();
            try {
                Map<String, List<PortBinding>> published = new LinkedHashMap<>();
                for (Endpoint o : records.endpoints()) {
                    if (!o.id().equals(e.id()) && !o.ports().isEmpty()) published.put(o.id(), o.bindings());
                }
                Conflicts.checkPorts(r.ports(), published);
                attacher.publish(chain(n, e), runtime(e, e.sandboxKey()), mappings);
                records.save(e.withPorts(raw));
            } finally {
                ports.unlock();
            }
        } finally {
            l.unlock();
        }
    }

    @Override
    public void revokeExternalConnectivity(EndpointRef r) {
        ReentrantLock l = records.lock(r.networkId());
        try {
            Endpoint e = records.endpoint(r.endpointId());
            if (e == null || !e.joined() || e.ports().isEmpty()) return;
            DockerNetwork n = records.network("RevokeExternalConnectivity", r.networkId());
            attacher.unpublish(chain(n, e), runtime(e, e.sandboxKey()));
            records.save(e.withPorts(List.of()));
        } finally {
            l.unlock();
        }
    }

    @Override
    public void discoverNew(Discovery r) {
        // Node and datastore announcements: a local driver keeps its own state and needs neither.
    }

    @Override
    public void discoverDelete(Discovery r) {
    }

    /** Where the generated chains' plugins keep their nftables state (null: the plugins' default). */
    public void dataDir(String dir) {
        this.dataDir = dir;
    }

    private NetConfList chain(DockerNetwork n, Endpoint e) {
        return Chain.build(n, e, dataDir);
    }

    /** For tests and status. */
    public Map<String, DockerNetwork> networks() {
        return records.networksById();
    }

    public Map<String, Endpoint> endpoints() {
        return records.endpointsById();
    }

    /** The interface's name between ADD and libnetwork's move into the sandbox: unique per endpoint, 14 characters. */
    static String srcName(String endpointId) {
        return "jcv" + endpointId.substring(0, Math.min(11, endpointId.length()));
    }

    static RuntimeConf runtime(Endpoint e, String netns) {
        return new RuntimeConf(e.id(), netns, e.ifName(), List.of(Map.entry("IgnoreUnknown", "1")), Map.of());
    }

    private void note(String s) {
        if (log != null) log.println(Instant.now() + " jcnid docker " + s);
    }
}
