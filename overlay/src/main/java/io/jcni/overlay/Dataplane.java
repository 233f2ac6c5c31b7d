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
 * namespace. Every change is idempotent (replace on add; "not there" is fine on remove), so a
 * resync after a lost watch or an agent restart just re-applies.
 */
public sealed interface Dataplane permits Dataplane.Vxlan, Dataplane.HostGw {

    /** Prepares the local side before the lease is taken; returns the lease to publish for {@code subnet}. */
    Lease local(Cidr subnet);

    /** Finishes local setup once {@code subnet} is ours (VXLAN: the device's address). */
    void activate(Cidr subnet);

    void add(Lease remote);

    void remove(Lease remote);

    /** The pods' MTU: the underlay's minus the encapsulation. */
    int podMtu();

    /**
     * flannel's VXLAN: one device {@code flannel.<VNI>} (local = our public address, dstport, learning
     * off, MTU underlay - 50) holding our subnet's network address as a /32; per remote host a static
     * FDB entry (its VTEP MAC -> its public address), a permanent neighbour (its subnet's .0 -> VTEP
     * MAC) and an onlink route (its subnet via its .0 dev flannel.1). No multicast, no learning: the
     * kernel never floods or guesses.
     */
    final class Vxlan implements Dataplane {
        private final Rtnl rt;
        private final NetworkConfig.Vxlan cfg;
        private final IpAddr publicIp;
        private final Link underlay;
        private int index;
        private MacAddress mac;

        private final java.util.function.Consumer<String> notice;

        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, Link underlay) {
            this(rt, cfg, publicIp, underlay, s -> {});
        }

        /** @param notice told why an existing device was replaced */
        public Vxlan(Rtnl rt, NetworkConfig.Vxlan cfg, IpAddr publicIp, Link underlay, java.util.function.Consumer<String> notice) {
            this.rt = rt;
            this.cfg = cfg;
            this.publicIp = publicIp;
            this.underlay = underlay;
            this.notice = notice;
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
                var diff = VtepReuse.differences(have, cfg.vni(), publicIp, cfg.port(), underlay.index());
                if (!diff.isEmpty()) {
                    notice.accept(name + " exists with other parameters: " + String.join(", ", diff) + "; recreating it");
                    rt.deleteLink(dev.index());
                    dev = null;
                }
            }
            if (dev == null) {
                // Kept across agent restarts (pods keep working); its MAC is what other hosts know us by.
                rt.addLink(NewLink.vxlan(name, cfg.vni()).vxlanLocal(publicIp).vxlanDev(underlay.index())
                        .vxlanPort(cfg.port()).vxlanLearning(false).mtu(podMtu()));
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
        public void add(Lease r) {
            MacAddress vtep = MacAddress.parse(r.vtepMac());
            IpAddr gw = r.subnet().network();
            rt.replaceNeighbor(Neighbor.permanent(index, gw, vtep));
            rt.replaceNeighbor(Neighbor.fdb(index, vtep, r.publicIp()));
            rt.replaceRoute(Route.to(r.subnet().masked()).via(gw).dev(index).onlink());
        }

        @Override
        public void remove(Lease r) {
            IpAddr gw = r.subnet().network();
            MacAddress vtep = MacAddress.parse(r.vtepMac());
            ignoreMissing(() -> rt.deleteRoute(Route.to(r.subnet().masked()).dev(index)));
            ignoreMissing(() -> rt.deleteNeighbor(Neighbor.permanent(index, gw, vtep)));
            ignoreMissing(() -> rt.deleteFdb(Neighbor.fdb(index, vtep, r.publicIp())));
        }

        @Override
        public int podMtu() {
            return underlay.mtu() - cfg.overhead();
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
        public void add(Lease r) {
            rt.replaceRoute(Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index()));
        }

        @Override
        public void remove(Lease r) {
            ignoreMissing(() -> rt.deleteRoute(Route.to(r.subnet().masked()).via(r.publicIp()).dev(underlay.index())));
        }

        @Override
        public int podMtu() {
            return underlay.mtu();
        }
    }

    private static void ignoreMissing(Runnable r) {
        try {
            r.run();
        } catch (ErrnoException e) {
            if (!e.is(Errno.ESRCH) && !e.is(Errno.ENOENT) && !e.is(Errno.ENODEV)) throw e;
        }
    }
}
