package io.jcni.plugins.ipam.clusteripam;

import io.jcni.types.IpAddr;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this process knows of the taken addresses of each range set, shared by its concurrent ADDs
 * (jcnid's fast path, a load test), so a guess avoids what another call of this process took or
 * saw taken. A hint only: an entry may be stale (the address released since), and only the create
 * transaction gives an address. Empty in a fresh plugin process. Bounded: a set's entries are
 * dropped when they reach {@value #MAX} (IPv6 ranges are large; a listing refills them).
 */
final class TakenAddresses {
    static final int MAX = 1 << 16;
    private static final ConcurrentHashMap<String, Set<IpAddr>> SETS = new ConcurrentHashMap<>();

    private TakenAddresses() {}

    static Set<IpAddr> of(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set) {
        return SETS.computeIfAbsent(key(cfg, set), k -> ConcurrentHashMap.newKeySet());
    }

    /** An address this process is about to create (other calls of the process avoid it meanwhile) or saw taken. */
    static void claim(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, IpAddr ip) {
        Set<IpAddr> s = of(cfg, set);
        if (s.size() >= MAX) s.clear();
        s.add(ip);
    }

    static void unclaim(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, IpAddr ip) {
        of(cfg, set).remove(ip);
    }

    /** A fresh listing of the set's addresses replaces what was known. */
    static void replace(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, Collection<IpAddr> used) {
        Set<IpAddr> s = ConcurrentHashMap.newKeySet();
        if (used.size() < MAX) s.addAll(used);
        SETS.put(key(cfg, set), s);
    }

    /** An address this process released. */
    static void released(ClusterIpamConfig cfg, IpAddr ip) {
        for (ClusterIpamConfig.RangeSet set : cfg.rangeSets()) if (set.rangeOf(ip) != null) unclaim(cfg, set, ip);
    }

    /** The set's identity in this process: the etcd prefix and its ranges. */
    static String key(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set) {
        StringBuilder b = new StringBuilder(cfg.etcdPrefix());
        for (ClusterIpamConfig.Range r : set.ranges()) b.append(' ').append(r.subnet()).append(' ').append(r.first()).append('-').append(r.last());
        return b.toString();
    }
}
