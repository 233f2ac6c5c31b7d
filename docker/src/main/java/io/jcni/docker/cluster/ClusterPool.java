package io.jcni.docker.cluster;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.ipam.Pool;
import io.jcni.docker.store.SharedStore;
import io.jcni.types.StateDoc;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A cluster network's shared pools ({@code clusters/NAME/pool}, and {@code clusters/NAME/pool6} for a
 * network with IPv6): per address family one {@link Pool} document that
 * every host changes by compare-and-swap, so two hosts taking an address at the same moment never
 * get the same one (the second write finds the document changed, reads it again, and takes the next).
 *
 * <p>Beside the pool's fields the document names each container address's owner, the host that took
 * it ({@code "owners": {"10.60.1.5": "192.168.0.2"}}), so that the addresses of a host that died can be
 * given back ({@link #releaseOwners}). The gateway, which every host holds, has no owner; neither have
 * addresses taken before owners were recorded: those are never released that way.
 */
public final class ClusterPool {
    private ClusterPool() {}

    /** IPv4, IPv6: the order pools are gone through. */
    private static final boolean[] FAMILIES = {false, true};

    /** The pool with its owners, as one document holds them. Pure. */
    public record Shared(Pool pool, Map<IpAddr, String> owners) {
        public Shared {
            owners = new TreeMap<>(owners);
            owners.keySet().retainAll(pool.allocated());
        }

        public static Shared of(StateDoc d) {
            Map<IpAddr, String> owners = new TreeMap<>();
            if (d.fields().get("owners") instanceof Map<?, ?> m) {
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    IpAddr a = e.getKey() instanceof String k ? IpAddr.tryParse(k) : null;
                    if (a == null || !(e.getValue() instanceof String host)) throw d.damaged("owners", "expected address: host pairs, found " + e.getKey());
                    owners.put(a, host);
                }
            } else if (d.fields().get("owners") != null) {
                throw d.damaged("owners", "expected an object");
            }
            return new Shared(Pool.fromJson(d), owners);
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = pool.toJson();
            Map<String, Object> o = new TreeMap<>();
            for (Map.Entry<IpAddr, String> e : owners.entrySet()) o.put(e.getKey().toString(), e.getValue());
            m.put("owners", o);
            return m;
        }

        /** The hosts that own addresses. */
        public Set<String> ownerHosts() {
            return new TreeSet<>(owners.values());
        }

        /** Gives back every address of the {@code dead} hosts. */
        public Shared withoutOwners(Set<String> dead) {
            Pool p = pool;
            Map<IpAddr, String> o = new TreeMap<>(owners);
            for (Map.Entry<IpAddr, String> e : owners.entrySet()) {
                if (dead.contains(e.getValue())) {
                    p = p.release(e.getKey());
                    o.remove(e.getKey());
                }
            }
            return new Shared(p, o);
        }

        /**
         * Makes {@code host} the owner of {@code addresses} again (a restarted driver's running containers):
         * free ones are taken again, its own stay.
         *
         * @param conflicts receives the addresses someone else holds now (they stay the other's)
         */
        public Shared reclaimed(String host, Collection<IpAddr> addresses, List<IpAddr> conflicts) {
            Pool p = pool;
            Map<IpAddr, String> o = new TreeMap<>(owners);
            for (IpAddr a : addresses) {
                if (!p.allocated().contains(a)) {
                    p = p.take(a);
                    o.put(a, host);
                } else if (!host.equals(o.get(a))) {
                    conflicts.add(a);
                }
            }
            return new Shared(p, o);
        }
    }

    /**
     * The first shared pool of one family of a cluster network: its range, with the gateway (on every host's
     * bridge) taken.
     */
    public static Pool initial(ClusterNetwork def, boolean v6) {
        ClusterNetwork.Subnet s = def.subnet(v6);
        if (s == null) throw new IllegalArgumentException("cluster network " + def.name() + " has no IPv6 subnet");
        TreeSet<IpAddr> taken = new TreeSet<>();
        if (s.gateway() != null) taken.add(s.gateway());
        return new Pool((v6 ? "cluster6-" : "cluster-") + def.name(), "cluster", s.subnet(), s.range(), v6, 1, taken, def.name());
    }

    private static Shared shared(SharedStore store, String cluster, boolean v6, Map<String, Object> doc) {
        return Shared.of(StateDoc.of(store.location(ClusterKeys.cluster(cluster), ClusterKeys.pool(v6)), doc));
    }

    /** The pool's document now, if there is one. */
    public static Optional<Shared> read(SharedStore store, String cluster, boolean v6) {
        return store.read(ClusterKeys.cluster(cluster), ClusterKeys.pool(v6)).map(d -> shared(store, cluster, v6, d.doc()));
    }

    /**
     * A compare-and-swap of one family's pool, retried on conflict.
     *
     * @param change the pool after, from the pool now; called again after every conflict
     */
    private static void update(SharedStore store, String cluster, boolean v6, String call, UnaryOperator<Shared> change) {
        store.update(ClusterKeys.cluster(cluster), ClusterKeys.pool(v6), cur -> {
            Map<String, Object> doc = cur.orElseThrow(() -> new DriverException(call + "cluster network " + cluster + " has no "
                    + (v6 ? "IPv6 " : "") + "pool in the shared store"));
            return change.apply(shared(store, cluster, v6, doc)).toJson();
        });
    }

    /** Takes the wanted address, or the lowest free one of the family's pool, for {@code host}. */
    public static IpAddr take(SharedStore store, String cluster, boolean v6, IpAddr wanted, String host) {
        AtomicReference<IpAddr> got = new AtomicReference<>();
        update(store, cluster, v6, "RequestAddress: ", s -> {
            Pool after;
            try {
                after = s.pool().take(wanted);
            } catch (DriverException e) {
                throw new DriverException("RequestAddress: " + e.getMessage() + " (cluster network " + cluster + ")");
            }
            IpAddr a = Pool.added(s.pool(), after);
            got.set(a);
            Map<IpAddr, String> owners = new TreeMap<>(s.owners());
            owners.put(a, host);
            return new Shared(after, owners);
        });
        return got.get();
    }

    /** Gives an address back to its family's pool; one that is not taken (or a pool that is gone) is no error. */
    public static void give(SharedStore store, String cluster, IpAddr address) {
        boolean v6 = address.isV6();
        Optional<Shared> now = read(store, cluster, v6);
        if (now.isEmpty() || !now.get().pool().allocated().contains(address)) return;
        update(store, cluster, v6, "ReleaseAddress: ", s -> new Shared(s.pool().release(address), s.owners()));
    }

    /** The hosts owning addresses of the cluster's pools (both families). */
    public static Set<String> ownerHosts(SharedStore store, String cluster) {
        Set<String> hosts = new TreeSet<>();
        for (boolean v6 : FAMILIES) read(store, cluster, v6).ifPresent(s -> hosts.addAll(s.ownerHosts()));
        return hosts;
    }

    /**
     * Releases the addresses of hosts found dead ({@code due}) in every pool of the cluster, checking again with
     * every try which hosts are members ({@code liveHosts}): a host that came back keeps its addresses. A write
     * that races with a returning host's {@link #reclaim} fails its compare-and-swap and is tried again, or
     * comes first and the reclaim takes the addresses back.
     *
     * @return the addresses released (none when nothing was due any more)
     */
    public static List<IpAddr> releaseOwners(SharedStore store, String cluster, Set<String> due, Supplier<Set<String>> liveHosts) {
        List<IpAddr> released = new ArrayList<>();
        for (boolean v6 : FAMILIES) {
            if (read(store, cluster, v6).isEmpty()) continue;
            List<IpAddr> ofFamily = new ArrayList<>();
            update(store, cluster, v6, "", s -> {
                ofFamily.clear();
                Set<String> dead = new TreeSet<>(due);
                dead.removeAll(liveHosts.get());
                for (Map.Entry<IpAddr, String> e : s.owners().entrySet()) if (dead.contains(e.getValue())) ofFamily.add(e.getKey());
                // Written even when nothing changes: the store's update always writes, and a no-op costs one put.
                return s.withoutOwners(dead);
            });
            released.addAll(ofFamily);
        }
        return released;
    }

    /**
     * A restarted driver's claim on its running containers' addresses, each in its family's pool; always writes
     * the IPv4 pool (and the IPv6 one when there are IPv6 addresses), so a release judged before this host's key
     * came back fails its compare-and-swap (see {@link #releaseOwners}).
     *
     * @return the addresses another host holds now
     */
    public static List<IpAddr> reclaim(SharedStore store, String cluster, String host, Collection<IpAddr> addresses) {
        List<IpAddr> conflicts = new ArrayList<>();
        for (boolean v6 : FAMILIES) {
            List<IpAddr> ofFamily = addresses.stream().filter(a -> a.isV6() == v6).toList();
            if (v6 && ofFamily.isEmpty()) continue;
            List<IpAddr> taken = new ArrayList<>();
            update(store, cluster, v6, "", s -> {
                taken.clear();
                return s.reclaimed(host, ofFamily, taken);
            });
            conflicts.addAll(taken);
        }
        return conflicts;
    }
}
