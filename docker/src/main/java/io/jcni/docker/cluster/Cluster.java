package io.jcni.docker.cluster;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.ipam.Pool;
import io.jcni.docker.ipam.SharedPools;
import io.jcni.docker.network.ClusterMembership;
import io.jcni.docker.network.DockerNetwork;
import io.jcni.docker.network.Endpoint;
import io.jcni.docker.store.EtcdStore;
import io.jcni.types.StateDoc;
import io.jcni.linux.Rtnl;
import io.jcni.types.DamagedStateException;
import io.jcni.types.IpAddr;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cluster networks on this host: the shared definitions, pools and publications in etcd
 * ({@link ClusterKeys}; the definition and its VNI: {@link ClusterDefinitions}), and the VXLAN
 * dataplane that follows them.
 *
 * <p>Three threads keep the dataplane true: a watch on the clusters' keys wakes the sync, the sync
 * compares each network's published peers with what this host programmed ({@link PeerDiff}) and
 * applies the difference (also every few seconds, so a missed event or a failed netlink call is
 * made good; these two are {@link DataplaneSync}), and the lease keeper renews this host's lease,
 * and when it has expired (etcd was unreachable for longer than its TTL) takes a new one and
 * publishes this host's members and containers again. While etcd is unreachable nothing is taken from the kernel: running containers
 * keep reaching each other, and calls that need etcd fail with the client's bounded timeout.
 */
public final class Cluster implements ClusterMembership, SharedPools, AutoCloseable {
    private final EtcdStore store;
    private final JcniIpam ipam;
    private final Underlay underlay;
    private final String host;
    private final long ttlSeconds;
    private final java.time.Duration releaseGrace;
    private final PrintStream log;
    /** By cluster name: the networks of this host that are part of a cluster. */
    private final Map<String, ClusterMember> members = new ConcurrentHashMap<>();
    private final DataplaneSync dataplane;
    private volatile boolean closed;
    private final List<Thread> threads = new ArrayList<>();

    /**
     * @param releaseGrace how long a host that owns addresses of a shared pool may be without its host key
     *                     (its lease gone) before this host gives its addresses back ({@code --docker-release-grace})
     */
    public Cluster(EtcdStore store, JcniIpam ipam, Underlay underlay, long ttlSeconds, java.time.Duration releaseGrace, PrintStream log) {
        this.store = store;
        this.ipam = ipam;
        this.underlay = underlay;
        this.host = ClusterKeys.host(underlay.address());
        this.ttlSeconds = ttlSeconds;
        this.releaseGrace = releaseGrace;
        this.log = log;
        this.dataplane = new DataplaneSync(store, members, host, releaseGrace, this::note);
    }

    /** Takes this host's lease and starts the watch, sync and lease threads; etcd may be down now (they catch up). */
    public void start() {
        try {
            store.grantLease(ttlSeconds);
        } catch (DriverException e) {
            note("lease error=\"" + e.getMessage() + "\" (retried)");
        }
        threads.add(Thread.ofPlatform().daemon().name("jcnid-docker-cluster-sync").start(dataplane::syncLoop));
        threads.add(Thread.ofPlatform().daemon().name("jcnid-docker-cluster-watch").start(dataplane::watchLoop));
        threads.add(Thread.ofPlatform().daemon().name("jcnid-docker-cluster-lease").start(this::leaseLoop));
    }

    public Underlay underlay() {
        return underlay;
    }

    @Override
    public int mtu() {
        return underlay.mtu() - ClusterKeys.VXLAN_OVERHEAD;
    }

    @Override
    public void join(DockerNetwork n) {
        String name = n.cluster();
        ClusterMember already = members.get(name);
        if (already != null && !already.network.id().equals(n.id())) {
            throw new DriverException("CreateNetwork: network " + already.network.id() + " of this host is cluster network " + name + " already");
        }
        List<DockerNetwork.Subnet> linked = new ArrayList<>();
        try {
            ClusterNetwork.Subnet v4 = link(n.subnet(false), name, linked), v6 = link(n.subnet(true), name, linked);
            ClusterNetwork def = ClusterDefinitions.define(store, new ClusterNetwork(name, 0, v4, v6, n.internal()));
            for (boolean ipv6 : new boolean[] {false, true}) {
                if (def.subnet(ipv6) == null) continue;
                store.update(ClusterKeys.cluster(name), ClusterKeys.pool(ipv6), cur -> cur.orElseGet(() -> ClusterPool.initial(def, ipv6).toJson()));
            }
            store.putLeased(ClusterKeys.hosts(name), host, hostDoc(n));
            try (Rtnl rt = Rtnl.open()) {
                VxlanSegment.ensure(rt, n.bridge(), def.vni(), underlay, n.mtu());
            }
            members.put(name, new ClusterMember(name, n, def.vni(), new AbsentHosts(host, releaseGrace)));
            note("cluster=" + name + " network=" + n.id() + " vni=" + def.vni() + " joined");
            dataplane.wake();
        } catch (RuntimeException e) {
            for (DockerNetwork.Subnet s : linked) ipam.unlinkCluster(s.pool());
            throw e;
        }
    }

    /**
     * Links this host's pool of one family to the cluster's shared pool; its range and gateway are what this host
     * asks the cluster's definition to be. Null for a family the network does not have.
     */
    private ClusterNetwork.Subnet link(DockerNetwork.Subnet s, String name, List<DockerNetwork.Subnet> linked) {
        if (s == null) return null;
        Pool local = ipam.linkCluster(s.pool(), name);
        linked.add(s);
        return new ClusterNetwork.Subnet(s.pool(), local.range(), s.gateway() == null ? null : s.gateway().address());
    }

    private Map<String, Object> hostDoc(DockerNetwork n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", host);
        m.put("vtep", underlay.address().toString());
        m.put("network", n.id());
        return m;
    }

    @Override
    public void leave(DockerNetwork n) {
        String name = n.cluster();
        ClusterMember m = members.remove(name);
        int vni = m == null ? -1 : m.vni;
        try {
            if (m != null) for (String ep : m.own.keySet()) store.delete(ClusterKeys.endpoints(name), ep);
            store.delete(ClusterKeys.hosts(name), host);
            if (store.keys(ClusterKeys.hosts(name)).isEmpty()) {
                // The last host: the network goes from etcd (its VNI too). A host joining right now finds the
                // definition gone and creates it again.
                if (vni < 0) vni = ClusterDefinitions.vni(store, name);
                ClusterDefinitions.remove(store, name, vni);
                note("cluster=" + name + " removed (last host)");
            }
        } catch (DriverException | DamagedStateException e) {
            note("cluster=" + name + " leave error=\"" + e.getMessage() + "\" (this host's entries expire with its lease)");
        }
        if (vni > 0) {
            try (Rtnl rt = Rtnl.open()) {
                VxlanSegment.delete(rt, vni);
            }
        }
        for (DockerNetwork.Subnet sub : n.subnets()) ipam.unlinkCluster(sub.pool());
    }

    @Override
    public void publish(DockerNetwork n, Endpoint e) {
        ClusterMember m = member("Join", n);
        Peer p = peer(e);
        try {
            store.putLeased(ClusterKeys.endpoints(m.name), e.id(), p.toJson());
        } catch (DriverException x) {
            // Just after etcd came back, this host's lease may have expired before the lease keeper noticed:
            // renewing it here (and publishing again) spares the first container after an outage an error.
            if (x.getMessage() == null || !x.getMessage().contains("lease not found")) throw x;
            renewIfExpired();
            store.putLeased(ClusterKeys.endpoints(m.name), e.id(), p.toJson());
        }
        m.own.put(e.id(), p);
    }

    private Peer peer(Endpoint e) {
        List<IpAddr> ips = new ArrayList<>();
        if (e.address() != null) ips.add(e.address().address());
        if (e.addressV6() != null) ips.add(e.addressV6().address());
        return new Peer(e.id(), host, e.mac().toLowerCase(java.util.Locale.ROOT), ips, underlay.address());
    }

    @Override
    public void withdraw(DockerNetwork n, Endpoint e) {
        ClusterMember m = members.get(n.cluster());
        if (m != null) m.own.remove(e.id());
        try {
            store.delete(ClusterKeys.endpoints(n.cluster()), e.id());
        } catch (DriverException x) {
            note("cluster=" + n.cluster() + " endpoint=" + e.id() + " withdraw error=\"" + x.getMessage() + "\" (expires with the lease)");
        }
    }

    @Override
    public void resume(DockerNetwork n, List<Endpoint> running) {
        String name = n.cluster();
        ClusterNetwork def = store.get(ClusterKeys.cluster(name), ClusterKeys.NETWORK)
                .map(d -> ClusterNetwork.fromJson(StateDoc.of(store.location(ClusterKeys.cluster(name), ClusterKeys.NETWORK), d)))
                .orElseThrow(() -> new DriverException("cluster network " + name + " is gone from etcd"));
        store.putLeased(ClusterKeys.hosts(name), host, hostDoc(n));
        try (Rtnl rt = Rtnl.open()) {
            VxlanSegment.ensure(rt, n.bridge(), def.vni(), underlay, n.mtu());
        }
        ClusterMember m = new ClusterMember(name, n, def.vni(), new AbsentHosts(host, releaseGrace));
        members.put(name, m);
        for (Endpoint e : running) {
            Peer p = peer(e);
            store.putLeased(ClusterKeys.endpoints(name), e.id(), p.toJson());
            m.own.put(e.id(), p);
        }
        reclaim(m);
        dataplane.wake();
    }

    /**
     * After the host key is back: addresses of this host's containers that the other hosts released meanwhile
     * (this driver was down, or cut off from etcd, for longer than the lease TTL and the grace period) are taken again.
     */
    private void reclaim(ClusterMember m) {
        List<IpAddr> addresses = new ArrayList<>();
        for (Peer p : m.own.values()) addresses.addAll(p.addresses());
        List<IpAddr> conflicts = ClusterPool.reclaim(store, m.name, host, addresses);
        if (!conflicts.isEmpty()) {
            note("cluster=" + m.name + " error=\"addresses of running containers taken by other hosts while this host was gone: " + conflicts + "\"");
        }
    }

    private ClusterMember member(String call, DockerNetwork n) {
        ClusterMember m = members.get(n.cluster());
        if (m == null) throw new DriverException(call + ": cluster network " + n.cluster() + " is not joined on this host");
        return m;
    }

    // ------------------------------------------------------------------ shared pool

    @Override
    public IpAddr take(String cluster, boolean v6, IpAddr wanted) {
        return ClusterPool.take(store, cluster, v6, wanted, host);
    }

    @Override
    public void give(String cluster, IpAddr address) {
        ClusterPool.give(store, cluster, address);
    }

    private void leaseLoop() {
        long every = Math.max(500, ttlSeconds * 1000 / 3);
        boolean failing = false;
        while (!closed) {
            try {
                Thread.sleep(every);
            } catch (InterruptedException e) {
                return;
            }
            try {
                renewIfExpired();
                if (failing) note("etcd reachable again");
                failing = false;
            } catch (RuntimeException e) {
                if (!failing) note("lease error=\"" + e.getMessage() + "\" (running containers keep their dataplane)");
                failing = true;
            }
        }
    }

    /**
     * Renews this host's lease, or when it has expired (etcd was unreachable for longer than its TTL) takes a new
     * one and publishes everything again. One at a time: two new leases would leave documents under one that
     * nobody renews.
     */
    private synchronized void renewIfExpired() {
        if (store.keepAlive()) return;
        store.grantLease(ttlSeconds);
        republish();
        note("lease renewed after expiry: members and containers published again");
    }

    private void republish() {
        for (ClusterMember m : members.values()) {
            store.putLeased(ClusterKeys.hosts(m.name), host, hostDoc(m.network));
            for (Peer p : m.own.values()) store.putLeased(ClusterKeys.endpoints(m.name), p.endpointId(), p.toJson());
            reclaim(m);
        }
        dataplane.wake();
    }

    /** For status: cluster networks joined here and the remote containers programmed. */
    public String status() {
        int peers = 0;
        for (ClusterMember m : members.values()) peers += m.programmed.size();
        return "docker_cluster host " + host + " underlay " + underlay.name() + " clusters " + members.size() + " peers " + peers + "\n";
    }

    /**
     * Stops the threads. The lease is left to expire rather than revoked: a restarted driver takes
     * a new one and publishes again, and until then the other hosts keep reaching this one's containers.
     */
    @Override
    public void close() {
        closed = true;
        dataplane.close();
        for (Thread t : threads) t.interrupt();
    }

    private void note(String s) {
        if (log != null) log.println(Instant.now() + " jcnid docker " + s);
    }
}
