package io.jcni.docker.ipam;

import io.jcni.docker.api.DriverException;
import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One address pool and what is taken from it. Pure: changes return a new Pool.
 *
 * @param id        PoolID as libnetwork sees it
 * @param space     local_scope or global_scope
 * @param pool      the subnet (--subnet, or a default one)
 * @param range     where automatic addresses come from (--ip-range; else the pool)
 * @param refs      RequestPool calls not yet released (two networks may share a pool)
 * @param allocated the addresses handed out, gateways included
 * @param cluster   the cluster network ({@code -o jcni.cluster=NAME}) whose shared pool in etcd hands out
 *                  this pool's container addresses instead of {@code allocated}; null for a pool of this host alone
 */
public record Pool(String id, String space, Cidr pool, Cidr range, boolean v6, int refs, TreeSet<IpAddr> allocated, String cluster) {

    public Pool {
        allocated = new TreeSet<>(allocated);
    }

    public Pool withRefs(int n) {
        return new Pool(id, space, pool, range, v6, n, allocated, cluster);
    }

    /** This pool with its container addresses handed out by the cluster network's shared pool (null: by this host again). */
    public Pool withCluster(String name) {
        return new Pool(id, space, pool, range, v6, refs, allocated, name);
    }

    /** Whether the two pools share any address. */
    public boolean overlaps(Cidr other) {
        return pool.contains(other.network()) || other.contains(pool.network());
    }

    /**
     * Takes an address: the wanted one (it must be in the pool, usable and free), or else the
     * lowest free one in the range.
     */
    public Pool take(IpAddr wanted) {
        IpAddr a = wanted == null ? firstFree() : checkWanted(wanted);
        TreeSet<IpAddr> s = new TreeSet<>(allocated);
        s.add(a);
        return new Pool(id, space, pool, range, v6, refs, s, cluster);
    }

    /** The address {@link #take} chose: the one it added. */
    public static IpAddr added(Pool before, Pool after) {
        TreeSet<IpAddr> s = new TreeSet<>(after.allocated);
        s.removeAll(before.allocated);
        return s.first();
    }

    public Pool release(IpAddr a) {
        TreeSet<IpAddr> s = new TreeSet<>(allocated);
        s.remove(a);
        return new Pool(id, space, pool, range, v6, refs, s, cluster);
    }

    private IpAddr checkWanted(IpAddr a) {
        if (a.isV6() != v6 || !pool.contains(a)) throw new DriverException("address " + a + " is not in the pool " + pool);
        if (reserved(a)) throw new DriverException("address " + a + " cannot be used in " + pool + " (network or broadcast address)");
        if (allocated.contains(a)) throw new DriverException("address " + a + " is already in use in " + pool);
        return a;
    }

    /** IPv4's network and broadcast addresses (except in /31 and /32), IPv6's subnet-router anycast address. */
    private boolean reserved(IpAddr a) {
        if (v6) return pool.prefix() < 127 && a.equals(pool.network());
        return pool.prefix() < 31 && (a.equals(pool.network()) || a.equals(pool.last()));
    }

    private IpAddr firstFree() {
        BigInteger end = range.last().toBigInteger();
        IpAddr a = range.network();
        // Each step skips an address that is taken or reserved, so this ends within allocated + 3 steps.
        // An --ip-range's own .0 and .255 are skipped too (many tools dislike them); --ip may still take them.
        boolean edges = !v6 && range.prefix() < 31;
        for (int i = 0, max = allocated.size() + 5; i <= max && a.toBigInteger().compareTo(end) <= 0; i++) {
            boolean edge = edges && (a.equals(range.network()) || a.equals(range.last()));
            if (!edge && !reserved(a) && !allocated.contains(a)) return a;
            if (a.equals(range.last())) break;
            a = a.next();
        }
        throw new DriverException("no free address left in " + range);
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("space", space);
        m.put("pool", pool.toString());
        m.put("range", range.toString());
        m.put("v6", v6);
        m.put("refs", (long) refs);
        List<Object> a = new ArrayList<>();
        for (IpAddr ip : allocated) a.add(ip.toString());
        m.put("allocated", a);
        if (cluster != null) m.put("cluster", cluster);
        return m;
    }

    public static Pool fromJson(StateDoc d) {
        Cidr pool = d.cidr("pool"), range = d.cidr("range");
        boolean v6 = d.bool("v6");
        if (pool.isV6() != v6 || !pool.contains(range.network())) throw d.damaged("range", range + " is not inside the pool " + pool);
        return new Pool(d.string("id"), d.string("space"), pool, range, v6, (int) d.integer("refs", 1, Integer.MAX_VALUE),
                new TreeSet<>(d.addresses("allocated")), d.optString("cluster"));
    }
}
