package io.jcni.linux;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;

/**
 * A route, both as a request ({@link Rtnl#addRoute}) and as a dump result. Built with factories
 * and withers:
 *
 * <pre>{@code
 * Route.defaultVia(gw).dev(eth0)
 * Route.to(Cidr.parse("10.0.0.0/8")).via(gw).metric(100).table(100)
 * Route.to(subnet).dev(eth0).scope(Route.SCOPE_LINK).mtu(1400).advmss(1360)
 * }</pre>
 *
 * Unset values are -1 (ints) or null: on add the kernel (or iproute2's conventions) decide, on
 * delete they match anything.
 *
 * @param dst destination; prefix 0 for a default route. Host bits may be set: requests send the network address
 * @param src preferred source address (RTA_PREFSRC, "ip route ... src X")
 * @param priority the metric (RTA_PRIORITY)
 * @param flags rtm_flags; {@link #RTNH_F_ONLINK} for a gateway that is not on a connected subnet ("onlink")
 * @param nhid the {@link Nexthop} object the route goes through (RTA_NH_ID, "ip route ... nhid N"); 0: none
 */
public record Route(Cidr dst, IpAddr gateway, int oif, int scope, int table, int priority,
                    int mtu, int advmss, int protocol, IpAddr src, int type, int flags, int nhid) {
    public static final int SCOPE_UNIVERSE = 0;
    public static final int SCOPE_SITE = 200;
    public static final int SCOPE_LINK = 253;
    public static final int SCOPE_HOST = 254;
    public static final int SCOPE_NOWHERE = 255;

    public static final int TABLE_DEFAULT = 253;
    public static final int TABLE_MAIN = 254;
    public static final int TABLE_LOCAL = 255;

    public static final int PROTO_KERNEL = 2;
    public static final int PROTO_BOOT = 3;
    public static final int PROTO_STATIC = 4;

    public static final int TYPE_UNICAST = 1;
    public static final int TYPE_LOCAL = 2;
    public static final int TYPE_BROADCAST = 3;
    public static final int TYPE_BLACKHOLE = 6;
    public static final int TYPE_UNREACHABLE = 7;
    public static final int TYPE_PROHIBIT = 8;

    public static final int RTNH_F_ONLINK = 4;

    public static Route to(Cidr dst) {
        return new Route(dst, null, 0, -1, -1, -1, -1, -1, -1, null, -1, 0, 0);
    }


    /** The default route (0.0.0.0/0 or ::/0, by the gateway's family) via {@code gateway}. */
    public static Route defaultVia(IpAddr gateway) {
        return defaultRoute(Family.of(gateway)).via(gateway);
    }

    public static Route defaultRoute(Family family) {
        return to(Cidr.any(family == Family.INET6));
    }

    public Route via(IpAddr gw) {
        return new Route(dst, gw, oif, scope, table, priority, mtu, advmss, protocol, src, type, flags, nhid);
    }

    public Route dev(int index) {
        return new Route(dst, gateway, index, scope, table, priority, mtu, advmss, protocol, src, type, flags, nhid);
    }

    public Route scope(int s) {
        return new Route(dst, gateway, oif, s, table, priority, mtu, advmss, protocol, src, type, flags, nhid);
    }

    public Route table(int t) {
        return new Route(dst, gateway, oif, scope, t, priority, mtu, advmss, protocol, src, type, flags, nhid);
    }

    public Route metric(int m) {
        return new Route(dst, gateway, oif, scope, table, m, mtu, advmss, protocol, src, type, flags, nhid);
    }

    public Route mtu(int m) {
        return new Route(dst, gateway, oif, scope, table, priority, m, advmss, protocol, src, type, flags, nhid);
    }

    public Route advmss(int m) {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, m, protocol, src, type, flags, nhid);
    }

    public Route protocol(int p) {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, advmss, p, src, type, flags, nhid);
    }

    public Route src(IpAddr s) {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, advmss, protocol, s, type, flags, nhid);
    }

    public Route type(int t) {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, advmss, protocol, src, t, flags, nhid);
    }

    /** The gateway is reached directly on the output device even outside its subnets ({@code ip route ... onlink}), as flannel's VXLAN routes. */
    public Route onlink() {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, advmss, protocol, src, type, flags | RTNH_F_ONLINK, nhid);
    }

    /**
     * Through nexthop object {@code id} ({@code ip route ... nhid ID}): the gateway, device and
     * onlink flag are the nexthop's, so the route carries none of its own.
     */
    public Route nexthop(int id) {
        return new Route(dst, gateway, oif, scope, table, priority, mtu, advmss, protocol, src, type, flags, id);
    }

    public Family family() {
        return Family.of(dst.address());
    }

    public boolean isDefault() {
        return dst.prefix() == 0;
    }

    /** The rtmsg and attributes of an add/replace ({@code delete} false) or delete request. */
    void encode(NlMessage m, boolean delete) {
        int t = table < 0 ? TABLE_MAIN : table;
        int sc;
        if (scope >= 0) {
            sc = scope;
        } else if (delete) {
            sc = SCOPE_NOWHERE; // matches any scope
        } else if (type == TYPE_LOCAL) {
            sc = SCOPE_HOST;
        } else {
            // As iproute2: a unicast IPv4 route without a gateway is on-link (a nexthop object is a gateway).
            sc = gateway == null && nhid == 0 && family() == Family.INET && (type < 0 || type == TYPE_UNICAST) ? SCOPE_LINK : SCOPE_UNIVERSE;
        }
        int proto = protocol >= 0 ? protocol : delete ? 0 : PROTO_BOOT;
        int ty = type >= 0 ? type : delete ? 0 : TYPE_UNICAST;
        m.u8(family().af()).u8(dst.prefix()).u8(0).u8(0).u8(t < 256 ? t : 0).u8(proto).u8(sc).u8(ty).u32(delete ? 0 : flags);
        m.attrU32(Rtm.RTA_TABLE, t);
        if (dst.prefix() > 0) m.attrAddress(Rtm.RTA_DST, dst.network());
        if (gateway != null) m.attrAddress(Rtm.RTA_GATEWAY, gateway);
        if (oif > 0) m.attrU32(Rtm.RTA_OIF, oif);
        if (priority >= 0) m.attrU32(Rtm.RTA_PRIORITY, priority);
        if (nhid != 0) m.attrU32(Rtm.RTA_NH_ID, nhid);
        if (src != null) m.attrAddress(Rtm.RTA_PREFSRC, src);
        if (!delete && (mtu > 0 || advmss > 0)) {
            int metrics = m.nest(Rtm.RTA_METRICS);
            if (mtu > 0) m.attrU32(Rtm.RTAX_MTU, mtu);
            if (advmss > 0) m.attrU32(Rtm.RTAX_ADVMSS, advmss);
            m.end(metrics);
        }
    }

    static Route decode(NlMsg m) {
        int af = m.u8(0);
        NlAttrs a = m.attrs(Rtm.RTMSG_SIZE);
        IpAddr dstAddr = a.address(Rtm.RTA_DST);
        Cidr dst = dstAddr != null
                ? new Cidr(dstAddr, m.u8(1))
                : defaultRoute(af == Family.INET6.af() ? Family.INET6 : Family.INET).dst();
        NlAttrs metrics = a.nested(Rtm.RTA_METRICS);
        return new Route(dst, a.address(Rtm.RTA_GATEWAY), a.u32(Rtm.RTA_OIF, 0), m.u8(6),
                a.u32(Rtm.RTA_TABLE, m.u8(4)), a.u32(Rtm.RTA_PRIORITY, 0), metrics.u32(Rtm.RTAX_MTU, 0),
                metrics.u32(Rtm.RTAX_ADVMSS, 0), m.u8(5), a.address(Rtm.RTA_PREFSRC), m.u8(7), m.i32(8), a.u32(Rtm.RTA_NH_ID, 0));
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("Route[").append(isDefault() ? "default" : dst.toString());
        if (!dst.isV6() && isDefault()) s.append("(v4)");
        if (gateway != null) s.append(" via ").append(gateway);
        if (oif > 0) s.append(" dev ").append(oif);
        if (table >= 0) s.append(" table ").append(table);
        if (priority >= 0) s.append(" metric ").append(priority);
        if (scope >= 0) s.append(" scope ").append(scope);
        if (src != null) s.append(" src ").append(src);
        if (mtu > 0) s.append(" mtu ").append(mtu);
        if (advmss > 0) s.append(" advmss ").append(advmss);
        if (nhid != 0) s.append(" nhid ").append(Integer.toUnsignedString(nhid));
        if ((flags & RTNH_F_ONLINK) != 0) s.append(" onlink");
        return s.append(']').toString();
    }
}
