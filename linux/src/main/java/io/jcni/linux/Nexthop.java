package io.jcni.linux;

import io.jcni.types.IpAddr;

/**
 * A nexthop object (Linux 5.3+, {@code ip nexthop}): a gateway and device with an id of its own,
 * which routes name ({@link Route#nexthop(int)}, RTA_NH_ID) instead of carrying the gateway
 * themselves. Both as a request ({@link Rtnl#addNexthop}) and as a dump result.
 *
 * <pre>{@code
 * Nexthop.via(7, gw).dev(flannel1).onlink()      // ip nexthop add id 7 via GW dev flannel.1 onlink
 * }</pre>
 *
 * Why they exist here: the kernel keeps a plain route's gateway in a {@code fib_info} of its own,
 * found by hashing, and adding routes through distinct gateways grows slower as they accumulate
 * (thousands of overlay routes, one gateway each); routes bound to nexthop objects share the
 * object's and stay cheap (linux/README.md, "Nexthop objects").
 *
 * @param id       the object's id (NHA_ID, unsigned, never 0)
 * @param gateway  NHA_GATEWAY; null for a device-only nexthop
 * @param oif      NHA_OIF; 0 when unset
 * @param flags    nhm_flags: {@link Route#RTNH_F_ONLINK} as for a route
 * @param protocol nhm_protocol, who installed it ({@code ip nexthop ... proto N}); 0 when unset
 */
public record Nexthop(int id, IpAddr gateway, int oif, int flags, int protocol) {

    public static Nexthop via(int id, IpAddr gateway) {
        if (id == 0) throw new IllegalArgumentException("nexthop id 0 means \"none\"");
        return new Nexthop(id, gateway, 0, 0, 0);
    }

    public Nexthop dev(int index) {
        return new Nexthop(id, gateway, index, flags, protocol);
    }

    /** The gateway is reached directly on the device even outside its subnets, as {@link Route#onlink()}. */
    public Nexthop onlink() {
        return new Nexthop(id, gateway, oif, flags | Route.RTNH_F_ONLINK, protocol);
    }

    public Nexthop protocol(int p) {
        return new Nexthop(id, gateway, oif, flags, p);
    }

    public boolean isOnlink() {
        return (flags & Route.RTNH_F_ONLINK) != 0;
    }

    /** The family of its gateway (AF_UNSPEC without one, as iproute2 sends a device-only nexthop). */
    int af() {
        return gateway == null ? 0 : Family.of(gateway).af();
    }

    /** struct nhmsg and the attributes of an add/replace request, in iproute2's order (id, gateway, device). */
    void encode(NlMessage m) {
        m.u8(af()).u8(0).u8(protocol).u8(0).u32(flags);
        m.attrU32(Rtm.NHA_ID, id);
        if (gateway != null) m.attrAddress(Rtm.NHA_GATEWAY, gateway);
        if (oif > 0) m.attrU32(Rtm.NHA_OIF, oif);
    }

    /** A request naming only the id (delete, get). */
    static void encodeId(NlMessage m, int id) {
        m.u8(0).u8(0).u8(0).u8(0).u32(0);
        m.attrU32(Rtm.NHA_ID, id);
    }

    static Nexthop decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.NHMSG_SIZE);
        return new Nexthop(a.u32(Rtm.NHA_ID, 0), a.address(Rtm.NHA_GATEWAY), a.u32(Rtm.NHA_OIF, 0), m.i32(4), m.u8(2));
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("Nexthop[id ").append(Integer.toUnsignedString(id));
        if (gateway != null) s.append(" via ").append(gateway);
        if (oif > 0) s.append(" dev ").append(oif);
        if (isOnlink()) s.append(" onlink");
        if (protocol != 0) s.append(" proto ").append(protocol);
        return s.append(']').toString();
    }
}
