package io.jcni.overlay;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.MacAddress;
import io.jcni.linux.Neighbor;
import io.jcni.linux.NewLink;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;

/**
 * The kernel side of a backend: what makes a remote host's subnet reachable, in this host's
 * namespace. Every change is idempotent ("already ours" is fine on add, "not there" on remove), so
 * a resync after a lost watch or an agent restart just re-applies.
 *
 * <p>Routes are added, never blindly replaced: a route to the same destination that jcni did not
 * install (a connected route, the default route, an operator's static route) stays as it is and
 * the remote subnet is skipped ({@link #add} returns false). jcni's routes are the ones carrying
 * {@link #ROUTE_PROTOCOL} (flanneld uses "boot"); for VXLAN also any route through the agent's own
 * VXLAN device, so routes a flanneld left on {@code flannel.<VNI>} are taken over.
 */
public sealed interface Dataplane permits Dataplane.Vxlan, Dataplane.HostGw {

    /** rtm_protocol of the agent's routes ({@code ip route} shows "proto 74"): how it knows its own. Unassigned in iproute2's rt_protos. */
    int ROUTE_PROTOCOL = 74;

    /** Prepares the local side before the lease is taken; returns the lease to publish for {@code subnet}. */
    Lease local(Cidr subnet);

    /** Finishes local setup once {@code subnet} is ours (VXLAN: the device's address). */
    void activate(Cidr subnet);

    /** Makes {@code remote} reachable; false (nothing changed) when a route jcni does not own holds its subnet. */
    boolean add(Lease remote);

    void remove(Lease remote);

    /** The pods' MTU: the underlay's minus the encapsulation. */
    int podMtu();

    /** Our VXLAN device's MAC once {@link #local} ran; null for host-gw. */
    String vtepMac();

    /**
     * flannel's VXLAN: one device {@code flannel.<VNI>} (local = our public address, dstport, learning
     * and GBP as configured, MTU {@code Backend.MTU} or the underlay's, minus 50) holding our subnet's
     * network address as a /32; per remote host a static FDB entry (its VTEP MAC -> its public
     * address), a permanent neighbour (its subnet's .0 -> VTEP MAC) and an onlink route (its subnet
     * via its .0 dev flannel.1). No multicast: the kernel never floods.
     *
     * <p>{@code DirectRouting}: a remote host whose public address is on one of the underlay's
     * connected networks gets a plain route instead (its subnet via its public address dev
     * underlay), as flanneld does: no encapsulation, and the reverse path of its pods' packets is
     * the underlay, which strict reverse-path filtering (rp_filter=1) requires when the other side
     * routes directly too.
     */
    final class Vxlan implements Dataplane {
        private final Rtnl rt;
        private final NetworkConfig.Vxlan cfg;
        private final IpAddr publicIp;
        private final Link underlay;
        private int index;
        private MacAddress mac;

        private final java.util.function.Consumer<String> notice;
        private final java.util.function.Supplier<java.util.List<Cidr>> underlayNets;

        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, Link underlay) {
            this(rt, cfg, publicIp, underlay, s -> {});
        }

        /** @param notice told why an existing device was replaced */
        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, Link underlay, java.util.function.Consumer<String> notice) {
            this(rt, cfg, publicIp, underlay, notice, java.util.List::of);
        }

        /** @param underlayNets the underlay's connected networks now (DirectRouting routes to hosts on them directly) */
        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, Link underlay, java.util.function.Consumer<String> notice,
                java.util.function.Supplier<java.util.List<Cidr>> underlayNets) {
            this.rt = rt;
            this.cfg = cfg;
            this.publicIp = publicIp;
            this.underlay = underlay;
            this.notice = notice;
            this.underlayNets = underlayNets;
        }

        @Override
        public Lease local(Cidr subnet) {
            String name = cfg.device();
            Link dev = rt.findLink(name).orElse(null);
            if (dev != null && !"vxlan".equals(dev.kind())) {
                notice.accept(name + " exists but is a " + dev.kind() + " device; recreating it");
                rt.deleteLink(dev.index());
                dev = null;
            }
            if (dev != null) {
                var have = rt.vxlanParams(dev.index()).orElseThrow();
                var diff = VtepReuse.differences(have, cfg.vni(), publicIp, cfg.port(), underlay.index(), cfg.learning(), cfg.gbp());
                if (!diff.isEmpty()) {
                    notice.accept(name + " exists with other parameters: " + String.join(", ", diff) + "; recreating it");
                    rt.deleteLink(dev.index());
                    dev = null;
                }
            }
            if (dev == null) {
                // Kept across agent restarts (pods keep working); its MAC is what other hosts know us by.
                rt.addLink(NewLink.vxlan(name, cfg.vni()).vxlanLocal(publicIp).vxlanDev(underlay.index())
                        .vxlanPort(cfg.port()).vxlanLearning(cfg.learning()).vxlanGbp(cfg.gbp()).mtu(podMtu()));
                dev = rt.link(name);
            } else {
                rt.setMtu(dev.index(), podMtu());
            }
            index = dev.index();
            mac = dev.mac();
            return new Lease(subnet, publicIp, cfg.type(), cfg.vni(), mac.toString());
        }

        @Override
        public void activate(Cidr subnet) {
            IpAddr net = subnet.network();
            for (var a : rt.addresses(index, io.jcni.linux.Family.INET)) {
                if (!a.address().equals(net)) rt.deleteAddress(index, a.address(), a.prefixLength()); // an old subnet's
            }
            try {
                rt.addAddress(index, net, 32, false);
            } catch (ErrnoException e) {
                if (!e.is(Errno.EEXIST)) throw e;
            }
            rt.setUp(index);
        }

        @Override
        public boolean add(Lease r) {
            if (direct(r)) {
                // A route through flannel.<VNI> held before (the host moved onto our L2) is ours to replace.
                if (!addOwnRoute(rt, Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index()), old -> old.oif() == index)) return false;
                removeEncapsulation(r); // its neighbour and FDB entry, should the lease have been encapsulated before
                return true;
            }
            MacAddress vtep = MacAddress.parse(r.vtepMac());
            IpAddr gw = r.subnet().network();
            // The route first: when it is not ours, nothing of this lease goes into the kernel.
            if (!addOwnRoute(rt, Route.to(r.subnet().masked()).via(gw).dev(index).onlink(), old -> old.oif() == index)) return false;
            rt.replaceNeighbor(Neighbor.permanent(index, gw, vtep));
            rt.replaceNeighbor(Neighbor.fdb(index, vtep, r.publicIp()));
            return true;
        }

        @Override
        public void remove(Lease r) {
            // Both kinds of route: the underlay's networks may have changed since the lease was added.
            ignoreMissing(() -> rt.deleteRoute(Route.to(r.subnet().masked()).dev(index)));
            ignoreMissing(() -> rt.deleteRoute(Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index()).protocol(ROUTE_PROTOCOL)));
            removeEncapsulation(r);
        }

        private void removeEncapsulation(Lease r) {
            if (r.vtepMac() == null) return;
            IpAddr gw = r.subnet().network();
            MacAddress vtep = MacAddress.parse(r.vtepMac());
            ignoreMissing(() -> rt.deleteNeighbor(Neighbor.permanent(index, gw, vtep)));
            ignoreMissing(() -> rt.deleteFdb(Neighbor.fdb(index, vtep, r.publicIp())));
        }

        /** DirectRouting on and the remote host on one of the underlay's connected networks (flanneld asks the kernel the same: a route without gateway). */
        boolean direct(Lease r) {
            return cfg.directRouting() && onLink(r.publicIp(), underlayNets.get());
        }

        @Override
        public int podMtu() {
            return cfg.podMtu(underlay.mtu());
        }

        @Override
        public String vtepMac() {
            return mac == null ? null : mac.toString();
        }
    }

    /** flannel's host-gw: a route to each remote subnet via that host's public address, on the underlay device. */
    final class HostGw implements Dataplane {
        private final Rtnl rt;
        private final IpAddr publicIp;
        private final Link underlay;

        public HostGw(Rtnl rt, IpAddr publicIp, Link underlay) {
            this.rt = rt;
            this.publicIp = publicIp;
            this.underlay = underlay;
        }

        @Override
        public Lease local(Cidr subnet) {
            return new Lease(subnet, publicIp, "host-gw", 0, null);
        }

        @Override
        public void activate(Cidr subnet) {}

        @Override
        public boolean add(Lease r) {
            return addOwnRoute(rt, Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index()), old -> false);
        }

        @Override
        public void remove(Lease r) {
            // The protocol is part of the match: an equal route someone else made is not deleted.
            ignoreMissing(() -> rt.deleteRoute(Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index()).protocol(ROUTE_PROTOCOL)));
        }

        @Override
        public int podMtu() {
            return underlay.mtu();
        }

        @Override
        public String vtepMac() {
            return null;
        }
    }

    /** Whether {@code ip} is inside one of {@code connected} (the underlay's networks without a gateway). Pure. */
    static boolean onLink(IpAddr ip, java.util.List<Cidr> connected) {
        for (Cidr c : connected) {
            if (!c.isV6() && !ip.isV6() && c.prefix() > 0 && c.contains(ip)) return true;
        }
        return false;
    }

    /**
     * Adds {@code route} (marked with {@link #ROUTE_PROTOCOL}) with NLM_F_EXCL. On EEXIST the
     * route in its place is replaced only when it is ours (our protocol, or {@code alsoOurs}); a
     * foreign one is left alone and false returned.
     */
    private static boolean addOwnRoute(Rtnl rt, Route route, java.util.function.Predicate<Route> alsoOurs) {
        Route marked = route.protocol(ROUTE_PROTOCOL);
        try {
            rt.addRoute(marked);
            return true;
        } catch (ErrnoException e) {
            if (!e.is(Errno.EEXIST)) throw e;
        }
        Cidr dst = route.dst().masked();
        for (Route old : rt.routes(io.jcni.linux.Family.INET, Route.TABLE_MAIN)) {
            // The kernel's EEXIST is about this key: table main, destination, metric 0 (ours have none).
            if (!old.dst().masked().equals(dst) || old.priority() != 0) continue;
            if (old.protocol() != ROUTE_PROTOCOL && !alsoOurs.test(old)) return false;
            rt.replaceRoute(marked);
            return true;
        }
        return false; // gone meanwhile, or another key (tos): leave it to the next resync
    }

    private static void ignoreMissing(Runnable r) {
        try {
            r.run();
        } catch (ErrnoException e) {
            if (!e.is(Errno.ESRCH) && !e.is(Errno.ENOENT) && !e.is(Errno.ENODEV)) throw e;
        }
    }
}
