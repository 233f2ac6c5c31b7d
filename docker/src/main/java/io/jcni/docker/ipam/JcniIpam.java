package io.jcni.docker.ipam;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.IpamCalls;
import io.jcni.docker.api.IpamDriver;
import io.jcni.docker.store.StateStore;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * {@code --ipam-driver jcni}: pools with reference counts and their addresses, each pool one
 * document in the {@link StateStore} (kind "pools").
 *
 * <p>A pool asked for by subnet has a PoolID derived from (address space, subnet, range), so asking
 * again returns the same pool and counts a reference; the pool goes when the last reference is
 * released. A request without a subnet gets a new default pool: the first /24 of
 * {@value #DEFAULT_V4} (or /64 of {@value #DEFAULT_V6}) that overlaps no pool of its address space.
 */
public final class JcniIpam implements IpamDriver {
    public static final String DEFAULT_V4 = "10.203.0.0/16";
    public static final String DEFAULT_V6 = "fd6a:636e:6900::/48";
    static final String KIND = "pools";

    private final StateStore store;
    private final Map<String, Pool> pools = new TreeMap<>();
    private volatile SharedPools shared;

    public JcniIpam(StateStore store) {
        this(store, line -> {});
    }

    /** @param report where a damaged pool document is named (it is moved aside, and the other pools are served) */
    public JcniIpam(StateStore store, Consumer<String> report) {
        this.store = store;
        pools.putAll(store.load(KIND, Pool::fromJson, Pool::id, report));
    }

    /** Where the container addresses of pools linked to a cluster network come from (jcnid with --etcd-endpoints). */
    public void sharedPools(SharedPools s) {
        shared = s;
    }

    /**
     * Links the pool of {@code subnet} to the cluster network {@code cluster}: from now on its container
     * addresses come from the cluster's shared pool. libnetwork asks for the pool and the gateway before
     * CreateNetwork tells the driver that the network is a cluster network, so the gateway stays this
     * host's (every host of the cluster has the same gateway on its own bridge).
     *
     * @return the pool as it was before (its range and gateway start the shared pool)
     */
    public synchronized Pool linkCluster(Cidr subnet, String cluster) {
        for (Pool p : pools.values()) {
            if (p.pool().equals(subnet)) {
                if (p.cluster() != null && !p.cluster().equals(cluster)) {
                    throw new DriverException("CreateNetwork: the pool " + subnet + " belongs to the cluster network " + p.cluster() + " already");
                }
                save(p.withCluster(cluster));
                return p;
            }
        }
        throw new DriverException("CreateNetwork: a cluster network takes its addresses from jcni's IPAM: give --ipam-driver with the driver's name (no jcni pool "
                + subnet + ")");
    }

    /** Undoes {@link #linkCluster} for the pool of {@code subnet}, if it is still there. */
    public synchronized void unlinkCluster(Cidr subnet) {
        for (Pool p : List.copyOf(pools.values())) if (p.pool().equals(subnet) && p.cluster() != null) save(p.withCluster(null));
    }

    @Override
    public synchronized PoolAnswer requestPool(IpamCalls.RequestPool r) {
        if (!r.addressSpace().equals(LOCAL_SPACE) && !r.addressSpace().equals(GLOBAL_SPACE)) {
            throw new DriverException("RequestPool: unknown address space \"" + r.addressSpace() + "\" (jcni has "
                    + LOCAL_SPACE + " and " + GLOBAL_SPACE + ")");
        }
        Cidr cidr = r.pool() != null ? r.pool() : defaultPool(r.addressSpace(), r.v6());
        Cidr range = r.subPool() != null ? r.subPool() : cidr;
        String id = poolId(r.addressSpace(), cidr, range);
        Pool p = pools.get(id);
        if (p == null) {
            for (Pool other : pools.values()) {
                if (other.space().equals(r.addressSpace()) && other.overlaps(cidr) && !other.pool().equals(cidr)) {
                    throw new DriverException("RequestPool: Pool overlaps with other one on this address space: " + cidr + " overlaps the pool "
                            + other.pool() + " already in use");
                }
            }
            p = new Pool(id, r.addressSpace(), cidr, range, r.v6(), 1, new TreeSet<>(), null);
        } else {
            p = p.withRefs(p.refs() + 1);
        }
        save(p);
        return new PoolAnswer(id, cidr, Map.of());
    }

    @Override
    public synchronized void releasePool(IpamCalls.ReleasePool r) {
        Pool p = pool("ReleasePool", r.poolId());
        if (p.refs() <= 1) {
            pools.remove(p.id());
            store.delete(KIND, p.id());
        } else {
            save(p.withRefs(p.refs() - 1));
        }
    }

    @Override
    public synchronized Cidr requestAddress(IpamCalls.RequestAddress r) {
        Pool p = pool("RequestAddress", r.poolId());
        if (p.cluster() != null && !r.gateway()) {
            SharedPools s = shared;
            if (s == null) throw new DriverException("RequestAddress: the pool " + p.pool() + " is cluster network " + p.cluster() + "'s, and jcnid runs without --etcd-endpoints");
            return new Cidr(s.take(p.cluster(), p.v6(), r.address()), p.pool().prefix());
        }
        Pool after;
        try {
            after = p.take(r.address());
        } catch (DriverException e) {
            throw new DriverException("RequestAddress: " + e.getMessage());
        }
        save(after);
        return new Cidr(Pool.added(p, after), p.pool().prefix());
    }

    @Override
    public synchronized void releaseAddress(IpamCalls.ReleaseAddress r) {
        Pool p = pool("ReleaseAddress", r.poolId());
        // Releasing what is not held is not an error: libnetwork may release again after a failure.
        if (p.allocated().contains(r.address())) {
            save(p.release(r.address()));
        } else if (p.cluster() != null && shared != null) {
            shared.give(p.cluster(), r.address());
        }
    }

    /** The pools, for tests and status. */
    public synchronized Map<String, Pool> pools() {
        return new TreeMap<>(pools);
    }

    private Pool pool(String call, String id) {
        Pool p = pools.get(id);
        if (p == null) throw new DriverException(call + ": no pool " + id);
        return p;
    }

    private void save(Pool p) {
        store.put(KIND, p.id(), p.toJson());
        pools.put(p.id(), p);
    }

    private Cidr defaultPool(String space, boolean v6) {
        Cidr base = Cidr.parse(v6 ? DEFAULT_V6 : DEFAULT_V4);
        int len = v6 ? 64 : 24;
        BigInteger step = BigInteger.ONE.shiftLeft((v6 ? 128 : 32) - len);
        BigInteger start = base.network().toBigInteger();
        int count = 1 << Math.min(16, len - base.prefix());
        for (int i = 0; i < count; i++) {
            Cidr c = new Cidr(IpAddr.fromBigInteger(start.add(step.multiply(BigInteger.valueOf(i))), v6), len);
            boolean free = pools.values().stream().noneMatch(p -> p.space().equals(space) && p.v6() == v6 && p.overlaps(c));
            if (free) return c;
        }
        throw new DriverException("RequestPool: every default pool in " + base + " is in use; give a --subnet");
    }

    /** Deterministic, so that asking for the same subnet again finds the same pool, even after a restart. */
    static String poolId(String space, Cidr pool, Cidr range) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((space + "|" + pool + "|" + range).getBytes(StandardCharsets.UTF_8));
            return "jcni-" + HexFormat.of().formatHex(h, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
