package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * Which subnet a host asks for. Pure: the caller reads the leases, takes the candidate with a
 * create-if-absent transaction and asks again when another host won the race.
 *
 * <p>Order, as flanneld: (1) a lease already carrying our PublicIP (an agent restart: keep the
 * subnet and every pod on it); (2) the subnet of our previous subnet.env, if free and still
 * leasable (a restart after the lease expired); (3) a random free subnet among the first 100 free
 * ones, so that hosts starting together rarely collide. A subnet overlapping one of {@code avoid}
 * (the underlay's networks: taking one would cut the host off its peers) is never chosen.
 */
public final class SubnetChoice {
    private SubnetChoice() {}

    /** The existing lease of {@code publicIp}, if any (the IPv6 one, {@code publicIpv6}, in an IPv6-only network). */
    public static Optional<Lease> ownLease(Collection<Lease> leases, IpAddr publicIp) {
        if (publicIp.isV6()) return leases.stream().filter(l -> publicIp.equals(l.publicIpv6())).findFirst();
        return leases.stream().filter(l -> l.publicIp().equals(publicIp)).findFirst();
    }

    /** A free IPv4 subnet to try, or empty when the network is full. */
    public static Optional<Cidr> pick(NetworkConfig cfg, Collection<Lease> leases, Cidr previous, Collection<Cidr> avoid, RandomGenerator random) {
        Set<Cidr> taken = new HashSet<>();
        for (Lease l : leases) taken.add(l.subnet());
        return pick(cfg.v4(), taken, previous, avoid, random);
    }

    /** A free IPv6 subnet to try (flanneld picks both families' the same way), or empty when the IPv6 network is full. */
    public static Optional<Cidr> pickV6(NetworkConfig cfg, Collection<Lease> leases, Cidr previous, Collection<Cidr> avoid, RandomGenerator random) {
        Set<Cidr> taken = new HashSet<>();
        for (Lease l : leases) {
            if (l.hasV6()) taken.add(l.ipv6Subnet());
        }
        return pick(cfg.v6(), taken, previous, avoid, random);
    }

    private static Optional<Cidr> pick(NetworkConfig.Pool pool, Set<Cidr> taken, Cidr previous, Collection<Cidr> avoid, RandomGenerator random) {
        if (previous != null) {
            Cidr p = previous.masked();
            if (pool.leasable(p) && !taken.contains(p) && !overlapsAny(p, avoid)) return Optional.of(p);
        }
        List<Cidr> free = new ArrayList<>();
        long n = pool.capacity();
        for (long i = 0; i < n && free.size() < 100; i++) {
            Cidr c = pool.subnet(i);
            if (!taken.contains(c) && !overlapsAny(c, avoid)) free.add(c);
        }
        if (free.isEmpty()) return Optional.empty();
        return Optional.of(free.get(random.nextInt(free.size())));
    }

    static boolean overlapsAny(Cidr c, Collection<Cidr> avoid) {
        for (Cidr a : avoid) {
            if (LeaseValidator.overlap(c, a)) return true;
        }
        return false;
    }
}
