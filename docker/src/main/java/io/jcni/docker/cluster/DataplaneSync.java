package io.jcni.docker.cluster;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.store.EtcdStore;
import io.jcni.linux.Rtnl;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Keeps the dataplane of this host's cluster members true: a watch on the clusters' keys wakes the
 * sync, which compares each member's published peers with what this host programmed
 * ({@link PeerDiff}) and applies the difference (also every few seconds, so a missed event or a
 * failed netlink call is made good), and gives back the shared pools' addresses of hosts gone for
 * the grace period. The two threads are {@link Cluster}'s; they run until {@link #close}.
 */
final class DataplaneSync implements AutoCloseable {
    private static final long SYNC_EVERY_MILLIS = 3000;

    private final EtcdStore store;
    /** {@link Cluster}'s members, by cluster name. */
    private final Map<String, ClusterMember> members;
    private final String host;
    private final Duration releaseGrace;
    private final Consumer<String> note;
    private final Object wake = new Object();
    private boolean dirty;
    private volatile boolean closed;
    private volatile AutoCloseable watchHandle;

    DataplaneSync(EtcdStore store, Map<String, ClusterMember> members, String host, Duration releaseGrace, Consumer<String> note) {
        this.store = store;
        this.members = members;
        this.host = host;
        this.releaseGrace = releaseGrace;
        this.note = note;
    }

    /** Asks for a sync now (a change in etcd, a member joined or published again). */
    void wake() {
        synchronized (wake) {
            dirty = true;
            wake.notifyAll();
        }
    }

    /** The sync thread: syncs every member when woken, and at the latest every {@value #SYNC_EVERY_MILLIS} ms. */
    void syncLoop() {
        while (!closed) {
            synchronized (wake) {
                long until = System.nanoTime() + SYNC_EVERY_MILLIS * 1_000_000;
                // Woken by the watch, or at the latest every SYNC_EVERY_MILLIS to make good what was missed.
                for (long left = SYNC_EVERY_MILLIS; !dirty && !closed && left > 0; left = (until - System.nanoTime()) / 1_000_000) {
                    try {
                        wake.wait(left);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                dirty = false;
            }
            for (ClusterMember m : List.copyOf(members.values())) {
                try {
                    sync(m);
                    releaseDeadHosts(m);
                } catch (RuntimeException e) {
                    note.accept("cluster=" + m.name + " sync error=\"" + e.getMessage() + "\" (retried)");
                }
            }
        }
    }

    /** Makes the member's VXLAN device hold exactly the other hosts' published containers. */
    private void sync(ClusterMember m) {
        Map<String, Peer> published = store.load(ClusterKeys.endpoints(m.name), Peer::fromJson, Peer::endpointId, note);
        PeerDiff d;
        synchronized (m) {
            d = PeerDiff.between(m.programmed, published.values(), host);
            if (d.isEmpty() || members.get(m.name) != m) return;
            try (Rtnl rt = Rtnl.open()) {
                int index = VxlanSegment.device(rt, m.vni).orElseThrow(() -> new DriverException("the VXLAN device of cluster network " + m.name + " is gone"));
                for (Peer p : d.remove()) {
                    VxlanSegment.unprogram(rt, index, p);
                    m.programmed.remove(p);
                }
                for (Peer p : d.add()) {
                    VxlanSegment.program(rt, index, p);
                    m.programmed.add(p);
                }
            }
        }
        note.accept("cluster=" + m.name + " peers=" + m.programmed.size() + " added=" + d.add().size() + " removed=" + d.remove().size());
    }

    /** Gives back the shared pools' addresses of hosts whose lease has been gone for the grace period. */
    private void releaseDeadHosts(ClusterMember m) {
        Set<String> owners = ClusterPool.ownerHosts(store, m.name);
        if (owners.isEmpty()) return;
        Set<String> due = m.absent.due(owners, Set.copyOf(store.keys(ClusterKeys.hosts(m.name))), System.nanoTime());
        if (due.isEmpty()) return;
        List<IpAddr> released = ClusterPool.releaseOwners(store, m.name, due, () -> Set.copyOf(store.keys(ClusterKeys.hosts(m.name))));
        if (!released.isEmpty()) {
            note.accept("cluster=" + m.name + " released=" + released.size() + " of hosts " + due + " (lease gone for " + releaseGrace.toSeconds() + " s)");
        }
    }

    /** The watch thread: wakes the sync on every change under the clusters' prefix; a broken watch is taken again, backing off. */
    void watchLoop() {
        String prefix = store.etcdPrefix() + "/" + ClusterKeys.CLUSTERS + "/";
        long backoff = 200;
        while (!closed) {
            try {
                long rev = store.client().getPrefix(prefix).revision();
                wake();
                backoff = 200;
                store.client().watch(prefix, rev + 1, ev -> wake(), h -> watchHandle = h);
            } catch (IOException | RuntimeException e) {
                if (closed) return;
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException x) {
                    return;
                }
                backoff = Math.min(backoff * 2, 5000);
            }
        }
    }

    /** Ends the loops: the watch is closed; the threads also need their interrupt ({@link Cluster#close}). */
    @Override
    public void close() {
        closed = true;
        AutoCloseable h = watchHandle;
        if (h != null) {
            try {
                h.close();
            } catch (Exception ignored) {
                // stopping anyway
            }
        }
    }
}
