package io.jcni.overlay;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.MacAddress;
import io.jcni.linux.Neighbor;
import io.jcni.linux.NewLink;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.RtnlChanges;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;

/**
 * The kernel side of a backend: what makes a remote host's subnet reachable, in this host's
 * namespace. Every change is idempotent ("already ours" is fine on add, "not there" on remove), so
 * a resync after a lost watch or an agent restart just re-applies.
 *
 * <p>Each remote subnet's route goes through a nexthop object whose id is derived from the subnet
 * ({@link NexthopIds}, {@link RemoteRoutes}), plain gateway routes on kernels without them.
 * Routes are added, never blindly replaced: a route to the same destination that jcni did not
 * install (a connected route, the default route, an operator's static route) stays as it is and
 * the remote subnet is skipped ({@link #add} returns false). jcni's routes are the ones carrying
 * {@link #ROUTE_PROTOCOL} (flanneld uses "boot"); for VXLAN also any route through the agent's own
 * VXLAN device, so routes a flanneld left on {@code flannel.<VNI>} are taken over.
 */
public sealed interface Dataplane extends RemoteProgramming.Target permits Dataplane.Vxlan, Dataplane.HostGw {

    /** rtm_protocol of the agent's routes ({@code ip route} shows "proto 74"): how it knows its own. Unassigned in iproute2's rt_protos. */
    int ROUTE_PROTOCOL = 74;

    /** The metric the kernel gives an IPv6 route added without one (IP6_RT_PRIO_USER); IPv4's is 0. */
    int IPV6_DEFAULT_METRIC = 1024;

    /**
     * Prepares the local side before the lease is taken; returns the lease to publish for
     * {@code subnet} (null without IPv4) and {@code subnet6} (null without IPv6).
     */
    Lease local(Cidr subnet, Cidr subnet6);

    /** The same for an IPv4-only network. */
    default Lease local(Cidr subnet) {
        return local(subnet, null);
    }

    /** Finishes local setup once the subnets are ours (VXLAN: the devices' addresses). */
    void activate(Cidr subnet, Cidr subnet6);

    default void activate(Cidr subnet) {
        activate(subnet, null);
    }

    /** Makes {@code remote} reachable; false (nothing changed) when a route jcni does not own holds one of its subnets. */
    @Override
    boolean add(Lease remote);

    @Override
    void remove(Lease remote);

    /** The pods' MTU: the underlay's minus the encapsulation (of IPv6's, when the network has IPv6). */
    int podMtu();

    /** Our VXLAN device's MAC once {@link #local} ran; null for host-gw. */
    String vtepMac();

    /** Our {@code flannel-v6.<VNI>}'s MAC once {@link #local} ran; null for host-gw or without IPv6. */
    String vtepMacV6();

    /**
     * After a full list: deletes jcni's nexthop objects that none of {@code programmed} goes
     * through (subnets that went while the agent was not running), with their routes. Returns how many.
     */
    int sweep(java.util.Collection<Lease> programmed);

    /** What the kernel holds for {@code remote}'s families while it is programmed (for {@link RemoteCheck}). */
    java.util.List<RemoteCheck.Expected> expected(Lease remote);

    /**
     * What the kernel holds of remote subnets, one dump per kind: the routes of the network's
     * families, the nexthop objects, (VXLAN) the neighbours of its devices and the FDB.
     */
    RemoteCheck.Kernel readKernel();

    /** The remotes of {@code programmed} the kernel lacks something of, with what (one {@link #readKernel}). */
    default java.util.Map<Cidr, java.util.Set<RemoteCheck.Missing>> missing(java.util.Collection<Lease> programmed) {
        return RemoteCheck.missing(programmed, this::expected, readKernel());
    }

    /**
     * flannel's VXLAN: one device per family, {@code flannel.<VNI>} (local = our PublicIP) and
     * {@code flannel-v6.<VNI>} (local = our PublicIPv6), with dstport, learning and GBP as
     * configured and MTU {@code Backend.MTU} or the underlay's minus 50 (IPv4) or 70 (IPv6), each
     * holding our subnet's network address as a /32 or /128; per remote host and family the
     * entries of {@link RemotePlan}. No multicast: the kernel never floods.
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
        private final Link underlay;
        private final Device v4, v6;

        private final java.util.function.Consumer<String> notice;
        private final java.util.function.Supplier<java.util.List<Cidr>> underlayNets;
        private final RemoteRoutes routes;

        /** One family's VXLAN device. */
        private static final class Device {
            final String name;
            final IpAddr local;
            int index;
            MacAddress mac;

            Device(String name, IpAddr local) {
                this.name = name;
                this.local = local;
            }
        }

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
            this(rt, cfg, publicIp, null, underlay, notice, underlayNets);
        }

        /**
         * @param publicIp   our IPv4 underlay address; null: no {@code flannel.<VNI>} (an IPv6-only network)
         * @param publicIpv6 our IPv6 underlay address; null: no {@code flannel-v6.<VNI>}
         */
        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, IpAddr publicIpv6, Link underlay,
                java.util.function.Consumer<String> notice, java.util.function.Supplier<java.util.List<Cidr>> underlayNets) {
            this(rt, cfg, publicIp, publicIpv6, underlay, notice, underlayNets, NexthopIds.NONE);
        }

        /** @param nexthops the nexthop object ids of remote subnets' routes ({@link NexthopIds#NONE}: plain gateway routes) */
        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, IpAddr publicIpv6, Link underlay,
                java.util.function.Consumer<String> notice, java.util.function.Supplier<java.util.List<Cidr>> underlayNets, NexthopIds nexthops) {
            this.rt = rt;
            this.routes = new RemoteRoutes(rt, nexthops, notice);
            this.cfg = cfg;
            this.underlay = underlay;
            this.v4 = publicIp == null ? null : new Device(cfg.device(), publicIp);
            this.v6 = publicIpv6 == null ? null : new Device(cfg.deviceV6(), publicIpv6);
            this.notice = notice;
            this.underlayNets = underlayNets;
        }

        @Override
        public Lease local(Cidr subnet, Cidr subnet6) {
            if (v4 != null) ensure(v4, cfg.podMtu(underlay.mtu()));
            if (v6 != null) ensure(v6, cfg.podMtuV6(underlay.mtu()));
            return new Lease(subnet == null ? Lease.NO_SUBNET : subnet, v4 == null ? Lease.NO_PUBLIC_IP : v4.local, cfg.type(), cfg.vni(),
                    v4 == null ? null : v4.mac.toString(), subnet6, v6 == null ? null : v6.local, v6 == null ? null : v6.mac.toString());
        }

        /** The device as configured: kept when it matches (its MAC is what other hosts know us by), else recreated. */
        private void ensure(Device d, int mtu) {
            Link dev = rt.findLink(d.name).orElse(null);
            if (dev != null && !"vxlan".equals(dev.kind())) {
                notice.accept(d.name + " exists but is a " + dev.kind() + " device; recreating it");
                rt.deleteLink(dev.index());
                dev = null;
            }
            if (dev != null) {
                var have = rt.vxlanParams(dev.index()).orElseThrow();
                var diff = VtepReuse.differences(have, cfg.vni(), d.local, cfg.port(), underlay.index(), cfg.learning(), cfg.gbp());
                if (!diff.isEmpty()) {
                    notice.accept(d.name + " exists with other parameters: " + String.join(", ", diff) + "; recreating it");
                    rt.deleteLink(dev.index());
                    dev = null;
                }
            }
            if (dev == null) {
                // Kept across agent restarts (pods keep working); its MAC is what other hosts know us by.
                rt.addLink(NewLink.vxlan(d.name, cfg.vni()).vxlanLocal(d.local).vxlanDev(underlay.index())
                        .vxlanPort(cfg.port()).vxlanLearning(cfg.learning()).vxlanGbp(cfg.gbp()).mtu(mtu));
                dev = rt.link(d.name);
            } else {
                rt.setMtu(dev.index(), mtu);
            }
            d.index = dev.index();
            d.mac = dev.mac();
        }

        @Override
        public void activate(Cidr subnet, Cidr subnet6) {
            if (v4 != null && subnet != null) address(v4, subnet.network(), 32, io.jcni.linux.Family.INET);
            if (v6 != null && subnet6 != null) address(v6, subnet6.network(), 128, io.jcni.linux.Family.INET6);
        }

        /** {@code net}/{@code len} on the device, alone (an old subnet's address goes; IPv6 link-local stays). */
        private void address(Device d, IpAddr net, int len, io.jcni.linux.Family family) {
            for (var a : rt.addresses(d.index, family)) {
                if (!a.address().equals(net) && !a.address().isLinkLocalUnicast()) rt.deleteAddress(d.index, a.address(), a.prefixLength());
            }
            try {
                rt.addAddress(d.index, net, len, net.isV6()); // IPv6 without DAD: the address is ours by lease, and usable at once
            } catch (ErrnoException e) {
                if (!e.is(Errno.EEXIST)) throw e;
            }
            rt.setUp(d.index);
        }

        @Override
        public boolean add(Lease r) {
            java.util.List<RemotePlan> plans = plans(r);
            for (int i = 0; i < plans.size(); i++) {
                if (!add(plans.get(i))) {
                    for (int j = 0; j < i; j++) remove(plans.get(j)); // all of the lease or none of it
                    return false;
                }
            }
            return true;
        }

        private boolean add(RemotePlan p) {
            int index = device(p).index;
            if (!p.overVxlan()) {
                // A route through flannel(-v6).<VNI> held before (the host moved onto our L2) is ours to replace.
                if (!routes.add(p.dst(), p.via(), underlay.index(), false, old -> old.oif() == index)) return false;
                removeEncapsulation(p); // its neighbour and FDB entry, should the lease have been encapsulated before
                return true;
            }
            MacAddress vtep = MacAddress.parse(p.vtepMac());
            // The route first: when it is not ours, nothing of this lease goes into the kernel.
            if (!routes.add(p.dst(), p.via(), index, true, old -> old.oif() == index)) return false;
            for (ErrnoException e : rt.apply(new RtnlChanges().replaceNeighbor(Neighbor.permanent(index, p.via(), vtep))
                    .replaceNeighbor(Neighbor.fdb(index, vtep, p.vtepDst())))) {
                if (e != null) throw e;
            }
            return true;
        }

        @Override
        public void remove(Lease r) {
            for (RemotePlan p : plans(r)) remove(p);
        }

        private void remove(RemotePlan p) {
            int index = device(p).index;
            RtnlChanges c = new RtnlChanges();
            // The nexthop object and both kinds of plain route: the underlay's networks may have changed since the lease was added.
            if (p.vtepDst() != null) {
                routes.removal(c, p.dst(), Route.to(p.dst()).dev(index),
                        Route.to(p.dst()).via(p.vtepDst()).dev(underlay.index()).protocol(ROUTE_PROTOCOL));
            } else {
                routes.removal(c, p.dst(), Route.to(p.dst()).dev(index));
            }
            encapsulationRemoval(c, p);
            routes.applyRemovals(c);
        }

        private void removeEncapsulation(RemotePlan p) {
            RtnlChanges c = new RtnlChanges();
            encapsulationRemoval(c, p);
            routes.applyRemovals(c);
        }

        private void encapsulationRemoval(RtnlChanges c, RemotePlan p) {
            if (p.vtepMac() == null) return;
            int index = device(p).index;
            MacAddress vtep = MacAddress.parse(p.vtepMac());
            c.deleteNeighbor(Neighbor.permanent(index, p.dst().network(), vtep)).deleteNeighbor(Neighbor.fdb(index, vtep, p.vtepDst()));
        }

        @Override
        public int sweep(java.util.Collection<Lease> programmed) {
            java.util.Set<Integer> keep = new java.util.HashSet<>();
            for (Lease l : programmed) for (RemotePlan p : plans(l)) keep.add(routes.idOf(p.dst()));
            return routes.sweep(keep);
        }

        @Override
        public java.util.List<RemoteCheck.Expected> expected(Lease r) {
            java.util.List<RemoteCheck.Expected> out = new java.util.ArrayList<>(2);
            for (RemotePlan p : plans(r)) {
                int index = device(p).index, nhid = routes.idOf(p.dst());
                if (!p.overVxlan()) {
                    out.add(new RemoteCheck.Expected(p.dst(), p.via(), underlay.index(), nhid, index, null, null));
                } else {
                    MacAddress vtep = MacAddress.parse(p.vtepMac());
                    out.add(new RemoteCheck.Expected(p.dst(), p.via(), index, nhid, index, Neighbor.permanent(index, p.via(), vtep),
                            Neighbor.fdb(index, vtep, p.vtepDst())));
                }
            }
            return out;
        }

        @Override
        public RemoteCheck.Kernel readKernel() {
            java.util.List<Route> rs = new java.util.ArrayList<>();
            java.util.List<Neighbor> neighbours = new java.util.ArrayList<>();
            if (v4 != null) {
                rs.addAll(rt.routes(io.jcni.linux.Family.INET));
                neighbours.addAll(rt.neighbors(v4.index, io.jcni.linux.Family.INET));
            }
            if (v6 != null) {
                rs.addAll(rt.routes(io.jcni.linux.Family.INET6));
                neighbours.addAll(rt.neighbors(v6.index, io.jcni.linux.Family.INET6));
            }
            return new RemoteCheck.Kernel(rs, routes.nexthops(), neighbours, rt.fdb(0)); // one FDB dump for both devices
        }

        private Device device(RemotePlan p) {
            return p.isV6() ? v6 : v4;
        }

        private java.util.List<RemotePlan> plans(Lease r) {
            java.util.List<Cidr> nets = underlayNets.get();
            return RemotePlan.of(r, v4 != null, v6 != null, cfg, ip -> onLink(ip, nets));
        }

        @Override
        public int podMtu() {
            return v6 != null ? cfg.podMtuV6(underlay.mtu()) : cfg.podMtu(underlay.mtu());
        }

        @Override
        public String vtepMac() {
            return v4 == null || v4.mac == null ? null : v4.mac.toString();
        }

        @Override
        public String vtepMacV6() {
            return v6 == null || v6.mac == null ? null : v6.mac.toString();
        }
    }

    /** flannel's host-gw: a route to each remote subnet via that host's public address (of the subnet's family), on the underlay device. */
    final class HostGw implements Dataplane {
        private final Rtnl rt;
        private final IpAddr publicIp, publicIpv6;
        private final Link underlay;
        private final RemoteRoutes routes;

        public HostGw(Rtnl rt, IpAddr publicIp, Link underlay) {
            this(rt, publicIp, null, underlay);
        }

        /** @param publicIp null in an IPv6-only network; {@code publicIpv6} null without IPv6 */
        public HostGw(Rtnl rt, IpAddr publicIp, IpAddr publicIpv6, Link underlay) {
            this(rt, publicIp, publicIpv6, underlay, NexthopIds.NONE, s -> {});
        }

        /**
         * @param nexthops the nexthop object ids of remote subnets' routes ({@link NexthopIds#NONE}: plain gateway routes)
         * @param notice   told once when the kernel has no nexthop objects
         */
        public HostGw(Rtnl rt, IpAddr publicIp, IpAddr publicIpv6, Link underlay, NexthopIds nexthops, java.util.function.Consumer<String> notice) {
            this.rt = rt;
            this.routes = new RemoteRoutes(rt, nexthops, notice);
            this.publicIp = publicIp;
            this.publicIpv6 = publicIpv6;
            this.underlay = underlay;
        }

        @Override
        public Lease local(Cidr subnet, Cidr subnet6) {
            return new Lease(subnet == null ? Lease.NO_SUBNET : subnet, publicIp == null ? Lease.NO_PUBLIC_IP : publicIp, "host-gw", 0, null,
                    subnet6, publicIpv6, null);
        }

        @Override
        public void activate(Cidr subnet, Cidr subnet6) {}

        @Override
        public boolean add(Lease r) {
            java.util.List<RemotePlan> plans = plans(r);
            for (int i = 0; i < plans.size(); i++) {
                RemotePlan p = plans.get(i);
                if (!routes.add(p.dst(), p.via(), underlay.index(), false, old -> false)) {
                    for (int j = 0; j < i; j++) remove(plans.get(j));
                    return false;
                }
            }
            return true;
        }

        @Override
        public void remove(Lease r) {
            for (RemotePlan p : plans(r)) remove(p);
        }

        private void remove(RemotePlan p) {
            RtnlChanges c = new RtnlChanges();
            // The protocol is part of the plain route's match: an equal route someone else made is not deleted.
            routes.removal(c, p.dst(), Route.to(p.dst()).via(p.via()).dev(underlay.index()).protocol(ROUTE_PROTOCOL));
            routes.applyRemovals(c);
        }

        @Override
        public int sweep(java.util.Collection<Lease> programmed) {
            java.util.Set<Integer> keep = new java.util.HashSet<>();
            for (Lease l : programmed) for (RemotePlan p : plans(l)) keep.add(routes.idOf(p.dst()));
            return routes.sweep(keep);
        }

        @Override
        public java.util.List<RemoteCheck.Expected> expected(Lease r) {
            java.util.List<RemoteCheck.Expected> out = new java.util.ArrayList<>(2);
            for (RemotePlan p : plans(r)) out.add(new RemoteCheck.Expected(p.dst(), p.via(), underlay.index(), routes.idOf(p.dst()), 0, null, null));
            return out;
        }

        @Override
        public RemoteCheck.Kernel readKernel() {
            java.util.List<Route> rs = new java.util.ArrayList<>();
            if (publicIp != null) rs.addAll(rt.routes(io.jcni.linux.Family.INET));
            if (publicIpv6 != null) rs.addAll(rt.routes(io.jcni.linux.Family.INET6));
            return new RemoteCheck.Kernel(rs, routes.nexthops(), java.util.List.of(), java.util.List.of());
        }

        private java.util.List<RemotePlan> plans(Lease r) {
            return RemotePlan.of(r, publicIp != null, publicIpv6 != null, new NetworkConfig.HostGw(), ip -> false);
        }

        @Override
        public int podMtu() {
            return underlay.mtu();
        }

        @Override
        public String vtepMac() {
            return null;
        }

        @Override
        public String vtepMacV6() {
            return null;
        }
    }

    /** Whether {@code ip} is inside one of {@code connected} (the underlay's networks without a gateway, of its family). Pure. */
    static boolean onLink(IpAddr ip, java.util.List<Cidr> connected) {
        for (Cidr c : connected) {
            if (c.isV6() == ip.isV6() && c.prefix() > 0 && c.contains(ip)) return true;
        }
        return false;
    }
}
