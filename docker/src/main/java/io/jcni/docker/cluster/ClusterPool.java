package io.jcni.docker.cluster;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.ipam.Pool;
import io.jcni.docker.store.SharedStore;
import io.jcni.docker.store.StateDoc;
import io.jcni.types.IpAddr;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A cluster network's shared pool ({@code clusters/NAME/pool}): one {@link Pool} document that
 * every host changes by compare-and-swap, so two hosts taking an address at the same moment never
 * get the same one (the second write finds the document changed, reads it again, and takes the next).
 */
public final class ClusterPool {
    private ClusterPool() {}

    /** The first shared pool of a cluster network: its range, with the gateway (on every host's bridge) taken. */
    public static Pool initial(ClusterNetwork def) {
        TreeSet<IpAddr> taken = new TreeSet<>();
        if (def.gateway() != null) taken.add(def.gateway());
        return new Pool("cluster-" + def.name(), "cluster", def.subnet(), def.range(), false, 1, taken, def.name());
    }

    public static IpAddr take(SharedStore store, String cluster, IpAddr wanted) {
        AtomicReference<IpAddr> got = new AtomicReference<>();
        String kind = ClusterKeys.cluster(cluster);
        store.update(kind, ClusterKeys.POOL, cur -> {
            Pool p = Pool.fromJson(StateDoc.of(store.location(kind, ClusterKeys.POOL),
                    cur.orElseThrow(() -> new DriverException("RequestAddress: cluster network " + cluster + " has no pool in the shared store"))));
            Pool after;
            try {
                after = p.take(wanted);
            } catch (DriverException e) {
                throw new DriverException("RequestAddress: " + e.getMessage() + " (cluster network " + cluster + ")");
            }
            got.set(Pool.added(p, after));
            return after.toJson();
        });
        return got.get();
    }

    /** Gives an address back; one that is not taken (or a pool that is gone) is no error. */
    public static void give(SharedStore store, String cluster, IpAddr address) {
        String kind = ClusterKeys.cluster(cluster);
        var now = store.read(kind, ClusterKeys.POOL);
        if (now.isEmpty()) return;
        if (!Pool.fromJson(StateDoc.of(store.location(kind, ClusterKeys.POOL), now.get().doc())).allocated().contains(address)) return;
        store.update(kind, ClusterKeys.POOL, cur -> {
            if (cur.isEmpty()) throw new DriverException("ReleaseAddress: cluster network " + cluster + " has no pool in the shared store");
            return Pool.fromJson(StateDoc.of(store.location(kind, ClusterKeys.POOL), cur.get())).release(address).toJson();
        });
    }
}
