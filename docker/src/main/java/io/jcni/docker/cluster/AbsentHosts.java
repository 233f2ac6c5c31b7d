package io.jcni.docker.cluster;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The decision behind giving back a dead host's addresses, pure (the clock is a parameter): which hosts
 * that own addresses of a shared pool have had no host key (their lease is gone) for longer than the
 * grace period, as this host has seen it.
 *
 * <p>The approach is cluster-ipam's reconcile ({@code HostReconcile}): never judge too early, then
 * release under a compare-and-swap that checks again. An absence starts when this host first sees it
 * (its own monotonic clock; the lease TTL has passed already when the key goes), and a host that is
 * back, or owns nothing any more, is forgotten. This host never judges itself: its own key is missing
 * only while its lease is being renewed after etcd was unreachable, and it publishes again then.
 */
public final class AbsentHosts {
    private final String self;
    private final long graceNanos;
    private final Map<String, Long> absentSince = new HashMap<>();

    public AbsentHosts(String self, Duration grace) {
        this.self = self;
        this.graceNanos = grace.toNanos();
    }

    /**
     * One look at the pool's owners and the member hosts.
     *
     * @return the owners absent for at least the grace period: their addresses are to be released
     */
    public synchronized Set<String> due(Set<String> owners, Set<String> liveHosts, long nowNanos) {
        absentSince.keySet().retainAll(owners);
        absentSince.keySet().removeAll(liveHosts);
        Set<String> due = new TreeSet<>();
        for (String o : owners) {
            if (o.equals(self) || liveHosts.contains(o)) continue;
            long since = absentSince.computeIfAbsent(o, k -> nowNanos);
            if (nowNanos - since >= graceNanos) due.add(o);
        }
        return due;
    }
}
