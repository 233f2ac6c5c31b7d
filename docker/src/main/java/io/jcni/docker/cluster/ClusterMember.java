package io.jcni.docker.cluster;

import io.jcni.docker.network.DockerNetwork;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A network of this host that is part of cluster network {@code name}: the remote containers its
 * VXLAN device is programmed with, this host's containers it published, and the hosts found absent.
 */
final class ClusterMember {
    final String name;
    final DockerNetwork network;
    final int vni;
    /** Guarded by this member: the sync programs one member at a time. */
    final Set<Peer> programmed = new LinkedHashSet<>();
    final Map<String, Peer> own = new ConcurrentHashMap<>();
    final AbsentHosts absent;

    ClusterMember(String name, DockerNetwork network, int vni, AbsentHosts absent) {
        this.name = name;
        this.network = network;
        this.vni = vni;
        this.absent = absent;
    }
}
