package io.jcni.docker.ipam;

import io.jcni.types.IpAddr;

/** Where a cluster network's container addresses come from: one pool that every host of the cluster takes from (etcd). */
public interface SharedPools {

    /** The wanted address, or the lowest free one of the shared pool's range; taken for every host at once. */
    IpAddr take(String cluster, IpAddr wanted);

    /** Gives an address back to the shared pool; one that is not taken is no error. */
    void give(String cluster, IpAddr address);
}
