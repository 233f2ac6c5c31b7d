package io.jcni.docker.network;

import java.util.List;

/**
 * What a network with {@code -o jcni.cluster=NAME} needs beyond a local one: the shared definition
 * and addresses (etcd), the VXLAN device on its bridge, and its containers published to the other
 * hosts. Implemented by {@code cluster.Cluster}; absent when jcnid runs without {@code --etcd-endpoints}.
 */
public interface ClusterMembership {

    /** The MTU of a cluster network on this host: the underlay's minus the VXLAN encapsulation. */
    int mtu();

    /**
     * Creates the cluster network or joins it (the definitions must agree), links its pools (IPv4, and
     * IPv6 with {@code --ipv6}) to the shared ones, makes the bridge with the VXLAN device on it and records this host as a member.
     */
    void join(DockerNetwork n);

    /** This host leaves: its VXLAN device goes, and with the last host the network goes from the shared store. Never fails for the shared store. */
    void leave(DockerNetwork n);

    /** Publishes a joined container (its MAC and addresses, this host's VTEP) for the other hosts. */
    void publish(DockerNetwork n, Endpoint e);

    /** Takes a container's publication back; never fails for the shared store (the entry would expire with the host's lease). */
    void withdraw(DockerNetwork n, Endpoint e);

    /** After a driver restart: the VXLAN device again, and the containers still running published again. */
    void resume(DockerNetwork n, List<Endpoint> running);
}
