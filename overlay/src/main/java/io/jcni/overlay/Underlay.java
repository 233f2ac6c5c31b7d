package io.jcni.overlay;

import io.jcni.linux.Address;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The underlay as the kernel shows it now: the interface flanneld would pick, the public addresses, its connected networks. */
final class Underlay {
    private final AgentOptions opts;
    private final Rtnl rt;
    private final AgentLog log;

    Underlay(AgentOptions opts, Rtnl rt, AgentLog log) {
        this.opts = opts;
        this.rt = rt;
        this.log = log;
    }

    /**
     * The underlay interface as flanneld picks it for a network of {@code stack} ({@link UnderlayChoice}),
     * from the kernel's links, addresses and main tables (both families) now.
     */
    UnderlayChoice.Picked pick(UnderlayChoice.Stack stack) {
        UnderlayChoice choice = opts.underlayChoice();
        List<UnderlayChoice.Iface> links = new ArrayList<>();
        for (Link l : rt.links()) {
            List<UnderlayChoice.Addr6> v6 = new ArrayList<>();
            for (Address a : rt.addresses(l.index(), Family.INET6)) v6.add(new UnderlayChoice.Addr6(a.address(), a.flags()));
            links.add(new UnderlayChoice.Iface(l.index(), l.name(), rt.addresses(l.index(), Family.INET).stream().map(Address::address).toList(), v6));
        }
        List<UnderlayChoice.RouteFact> routes = new ArrayList<>();
        for (Family f : new Family[] {Family.INET, Family.INET6}) {
            for (Route r : rt.routes(f, Route.TABLE_MAIN)) {
                routes.add(new UnderlayChoice.RouteFact(r.dst(), r.oif(), Math.max(0, r.priority()), r.src()));
            }
        }
        return choice.pick(stack, links, routes, miss -> log.log("underlay", "notice=\"" + miss + "\"")).orElseThrow(() -> new IllegalArgumentException(
                "failed to find interface to use that matches the interfaces and/or regexes provided"));
    }

    /** --public-ip; else the address the choice found (an --iface IP, a regex match, the route's source); else the interface's first. */
    IpAddr publicIp(Link underlay, IpAddr found) {
        if (!opts.publicIp().isEmpty()) return IpAddr.parse(opts.publicIp());
        if (found != null) return found;
        List<Address> addrs = rt.addresses(underlay.index(), Family.INET);
        if (addrs.isEmpty()) throw new IllegalArgumentException("interface " + underlay.name() + " has no IPv4 address");
        return addrs.getFirst().address();
    }

    /** {@code --public-ipv6}; else the IPv6 address the choice found; else the interface's first global one, in flanneld's order ({@link UnderlayChoice#publicIpv6}). */
    IpAddr publicIpv6(UnderlayChoice.Picked picked) {
        return UnderlayChoice.publicIpv6(opts.publicIpv6(), picked);
    }

    /**
     * The underlay device's connected networks of both families (its addresses' networks and its
     * routes without a gateway; not IPv6 link-local or multicast): no lease may cover one.
     */
    List<Cidr> networks(Link underlay) {
        Set<Cidr> nets = new LinkedHashSet<>();
        for (Family f : new Family[] {Family.INET, Family.INET6}) {
            for (Address a : rt.addresses(underlay.index(), f)) {
                if (!a.address().isLinkLocalUnicast()) nets.add(new Cidr(a.address(), a.prefixLength()).masked());
            }
            for (Route r : rt.routes(f, Route.TABLE_MAIN)) {
                if (r.oif() != underlay.index() || r.gateway() != null || r.dst().prefix() == 0) continue;
                IpAddr d = r.dst().network();
                if (d.isLinkLocalUnicast() || (d.isV6() && (d.bytes()[0] & 0xff) == 0xff)) continue;
                nets.add(r.dst().masked());
            }
        }
        return List.copyOf(nets);
    }
}
