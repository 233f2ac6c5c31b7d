package io.jcni.docker.network;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * What the driver makes good after a restart: each network's host side opened again, the cluster
 * networks' running containers published again, and the CNI DEL of every endpoint whose sandbox is
 * gone (its container ended while the driver was down), so no veth, address or port mapping
 * outlives it. Endpoints joined less than {@link #JOIN_GRACE_MILLIS} ago are left to dockerd
 * (their sandbox may be on its way).
 */
final class RestartReconcile {
    /**
     * How long after Join a missing sandbox is normal: dockerd calls Join before runc has created the
     * namespace, so a driver restarted in that moment must not take the container's network away.
     */
    static final long JOIN_GRACE_MILLIS = 60_000;

    private RestartReconcile() {}

    /**
     * Reconciles {@code records} as if it were {@code nowMillis}.
     *
     * @param cluster the cluster membership, or null when jcnid has no shared store
     * @param dataDir where the chains' plugins keep their nftables state (null: their default)
     * @return how many attachments were cleaned up
     */
    static int run(DriverRecords records, Attacher attacher, ClusterMembership cluster, String dataDir, long nowMillis,
                   Consumer<String> note) {
        for (DockerNetwork n : records.networks()) {
            try {
                if (n.linuxBridge() != null) attacher.openNetwork(n.linuxBridge(), n.internal(), n.masqueraded());
            } catch (RuntimeException ex) {
                note.accept("reconcile network=" + n.id() + " error=\"" + ex.getMessage() + "\"");
            }
        }
        for (DockerNetwork n : records.networks()) {
            if (n.cluster() == null || cluster == null) continue;
            List<Endpoint> running = records.endpoints().stream()
                    .filter(e -> e.networkId().equals(n.id()) && e.joined() && attacher.sandboxExists(e.sandboxKey())).toList();
            try {
                cluster.resume(n, running);
            } catch (RuntimeException ex) {
                note.accept("reconcile network=" + n.id() + " cluster=" + n.cluster() + " error=\"" + ex.getMessage() + "\"");
            }
        }
        int cleaned = 0;
        for (Endpoint e : List.copyOf(records.endpoints())) {
            if (!e.joined() || attacher.sandboxExists(e.sandboxKey()) || nowMillis - e.joinedMillis() < JOIN_GRACE_MILLIS) continue;
            ReentrantLock l = records.lock(e.networkId());
            try {
                DockerNetwork n = records.network(e.networkId());
                if (n != null) attacher.del(Chain.build(n, e, dataDir), CniNetworkDriver.runtime(e, ""), e.ifName());
                records.save(e.left());
                cleaned++;
                note.accept("reconcile endpoint=" + e.id() + " sandbox_gone=" + e.sandboxKey());
            } catch (RuntimeException ex) {
                note.accept("reconcile endpoint=" + e.id() + " error=\"" + ex.getMessage() + "\"");
            } finally {
                l.unlock();
            }
        }
        return cleaned;
    }
}
