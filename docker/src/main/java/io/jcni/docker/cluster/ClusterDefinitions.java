package io.jcni.docker.cluster;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.store.SharedStore;
import io.jcni.types.StateDoc;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A cluster network's shared definition in etcd ({@code clusters/NAME/network}) and its VNI's claim
 * ({@code vnis/VNI}): made by the first host that joins, the same for every other one, and removed
 * with the pools by the last host that leaves.
 */
final class ClusterDefinitions {
    private ClusterDefinitions() {}

    /** The shared definition: created with a free VNI by the first host, and the same for every other one. */
    static ClusterNetwork define(SharedStore store, ClusterNetwork asked) {
        String kind = ClusterKeys.cluster(asked.name());
        Map<String, Object> doc = store.update(kind, ClusterKeys.NETWORK, cur -> {
            if (cur.isEmpty()) return asked.withVni(reserveVni(store, asked.name())).toJson();
            ClusterNetwork have = ClusterNetwork.fromJson(StateDoc.of(store.location(kind, ClusterKeys.NETWORK), cur.get()));
            List<String> diff = have.differences(asked);
            if (!diff.isEmpty()) {
                throw new DriverException("CreateNetwork: cluster network " + asked.name() + " is defined differently on its other hosts: " + String.join(", ", diff));
            }
            return cur.get();
        });
        return ClusterNetwork.fromJson(StateDoc.of(store.location(kind, ClusterKeys.NETWORK), doc));
    }

    private static int reserveVni(SharedStore store, String name) {
        for (int i = 0; i < 1000; i++) {
            int vni = ClusterKeys.vniCandidate(name, i);
            Map<String, Object> claim = Map.of("cluster", name);
            if (store.putIfVersion(ClusterKeys.VNIS, Integer.toString(vni), claim, 0)) return vni;
            Optional<Map<String, Object>> holder = store.get(ClusterKeys.VNIS, Integer.toString(vni));
            if (holder.isPresent() && name.equals(holder.get().get("cluster"))) return vni;
        }
        throw new DriverException("CreateNetwork: no free VNI found for cluster network " + name);
    }

    /** The VNI the definition of cluster network {@code name} has, or -1 when there is none. */
    static int vni(SharedStore store, String name) {
        return store.get(ClusterKeys.cluster(name), ClusterKeys.NETWORK).map(d -> ((Number) d.get("vni")).intValue()).orElse(-1);
    }

    /** Removes cluster network {@code name} from etcd: its endpoints, pools, definition and the claim of {@code vni} (when > 0). */
    static void remove(SharedStore store, String name, int vni) {
        for (String ep : store.keys(ClusterKeys.endpoints(name))) store.delete(ClusterKeys.endpoints(name), ep);
        store.delete(ClusterKeys.cluster(name), ClusterKeys.POOL);
        store.delete(ClusterKeys.cluster(name), ClusterKeys.POOL6);
        store.delete(ClusterKeys.cluster(name), ClusterKeys.NETWORK);
        if (vni > 0) store.delete(ClusterKeys.VNIS, Integer.toString(vni));
    }
}
