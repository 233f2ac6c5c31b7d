package io.jcni.docker.ipam;

import io.jcni.types.IpAddr;

/** Where a cluster network's container addresses come from: one pool per address family that every host of the cluster takes from (etcd). */
public interface SharedPools {

    /** The wanted address, or the lowest free one of the range of the family's shared pool; taken for every host at once. */
    IpAddr take(String cluster, boolean v6, IpAddr wanted);

    /** Gives an address back to its family's shared pool; one that is not taken is no error. */
    void give(String cluster, IpAddr address);
}
