package io.jcni.overlay;

import io.jcni.types.Cidr;

/**
 * Which nexthop object id a remote subnet's route goes through. Pure.
 *
 * <p>The id is the subnet's own number, not a counter: the 23 bits just above its host part (for
 * a /24 in 10.0.0.0/8, the second and third bytes), in a range of its family's. So a restarted
 * agent, a resync, or another jcni version finds the object it made for a subnet without any
 * record on disk, and replaces it in place. The ranges are jcni's: {@link #V4_BASE} ..
 * {@link #V6_BASE} − 1 for IPv4 subnets, {@link #V6_BASE} .. {@link #END} − 1 for IPv6 (0x6a is
 * 'j'); the agent creates, replaces and deletes nexthops only inside them, and only with its
 * route protocol, so an operator's or another daemon's nexthops elsewhere are never touched.
 *
 * <p>The numbering is unique when the network has at most 2^23 subnets (Network's prefix at most
 * 23 bits shorter than SubnetLen: a /8 with /30 subnets fits, as does an IPv6 /40 with /64s). A
 * family whose network has more gets plain gateway routes ({@link #id} returns 0).
 */
public final class NexthopIds {
    /** 23 bits of subnet number per family. */
    static final int BITS = 23;
    public static final int V4_BASE = 0x6a000000;
    public static final int V6_BASE = V4_BASE + (1 << BITS);
    /** One past the last id jcni owns. */
    public static final int END = V6_BASE + (1 << BITS);

    /** No nexthop objects: every route a plain gateway route. */
    public static final NexthopIds NONE = new NexthopIds(false, false);

    private final boolean v4, v6;

    private NexthopIds(boolean v4, boolean v6) {
        this.v4 = v4;
        this.v6 = v6;
    }

    /** The numbering for {@code cfg}'s networks; a family with more than 2^23 subnets is left out. */
    public static NexthopIds of(NetworkConfig cfg) {
        return new NexthopIds(cfg.ipv4() && fits(cfg.v4()), cfg.ipv6() && fits(cfg.v6()));
    }

    private static boolean fits(NetworkConfig.Pool p) {
        return p.subnetLen() - p.network().prefix() <= BITS;
    }

    /** Whether {@code cfg}'s networks all get nexthop objects (for the log when one does not). */
    public boolean coversAll(NetworkConfig cfg) {
        return (!cfg.ipv4() || v4) && (!cfg.ipv6() || v6);
    }

    /** The id for the route to {@code subnet} (a leased subnet of its family's network); 0: a plain gateway route. */
    public int id(Cidr subnet) {
        if (!(subnet.isV6() ? v6 : v4)) return 0;
        int hostBits = subnet.address().bits() - subnet.prefix();
        int number = subnet.address().toBigInteger().shiftRight(hostBits).intValue() & ((1 << BITS) - 1);
        return (subnet.isV6() ? V6_BASE : V4_BASE) + number;
    }

    /** Whether {@code id} is in jcni's ranges. */
    public static boolean owned(int id) {
        return id >= V4_BASE && id < END;
    }
}
