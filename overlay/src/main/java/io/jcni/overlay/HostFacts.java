package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;

/**
 * What this host is in the network, as the remote leases are judged against it: the network config,
 * the public addresses, the underlay's networks, and our subnets and lease key once leased.
 */
final class HostFacts {
    final NetworkConfig cfg;
    final IpAddr publicIp, publicIpv6;
    /** Set once, before any thread but the agent's first reads it. */
    Dataplane dp;
    volatile List<Cidr> underlayNets;
    /** Our IPv4 subnet (null in an IPv6-only network), our IPv6 subnet (null without IPv6), our lease's key; set together. */
    volatile Cidr subnet, subnet6;
    volatile String ownKey;

    HostFacts(NetworkConfig cfg, IpAddr publicIp, IpAddr publicIpv6, List<Cidr> underlayNets) {
        this.cfg = cfg;
        this.publicIp = publicIp;
        this.publicIpv6 = publicIpv6;
        this.underlayNets = underlayNets;
    }

    /** What this host is now, for the validator. */
    LeaseValidator.Local local() {
        return new LeaseValidator.Local(cfg, subnet, publicIp, underlayNets, dp.vtepMac(), subnet6, publicIpv6, dp.vtepMacV6());
    }

    boolean isOwnKey(String key) {
        String own = ownKey;
        return own != null && key.equals(own);
    }
}
