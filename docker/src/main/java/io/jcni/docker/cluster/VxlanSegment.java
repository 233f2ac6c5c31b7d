package io.jcni.docker.cluster;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.MacAddress;
import io.jcni.linux.Neighbor;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.linux.VxlanParams;
import io.jcni.types.IpAddr;
import java.util.Optional;

/**
 * A cluster network's piece of L2 on one host: its bridge with a VXLAN device as a port, and on
 * that device a static FDB entry (MAC to the remote host's VTEP) and a neighbour entry (address to
 * MAC) per remote container. Learning is off and the device answers ARP itself from its neighbour
 * table ({@code proxy}), and there is no all-zeros FDB entry: nothing is flooded to other hosts, as
 * with Docker's own overlay driver.
 */
final class VxlanSegment {
    private VxlanSegment() {}

    /** The bridge (made when missing, as the bridge plugin would) and the VXLAN device on it, up; returns the device's index. */
    static int ensure(Rtnl rt, String bridge, int vni, Underlay u, int mtu) {
        Link br = rt.findLink(bridge).orElse(null);
        if (br == null) {
            rt.addLink(NewLink.bridge(bridge).mtu(mtu));
            br = rt.link(bridge);
        }
        rt.setUp(br.index());
        String name = ClusterKeys.vxlanDevice(vni);
        Link vx = rt.findLink(name).orElse(null);
        if (vx != null && !fits(rt, vx, vni, u)) {
            rt.deleteLink(vx.index()); // another underlay or VNI than recorded: made again below
            vx = null;
        }
        if (vx == null) {
            rt.addLink(NewLink.vxlan(name, vni).vxlanLocal(u.address()).vxlanDev(u.index()).vxlanPort(ClusterKeys.VXLAN_PORT)
                    .vxlanLearning(false).vxlanProxy(true).mtu(mtu).master(br.index()));
            vx = rt.link(name);
        } else if (vx.masterIndex() != br.index()) {
            rt.setMaster(vx.index(), br.index());
        }
        rt.setUp(vx.index());
        return vx.index();
    }

    private static boolean fits(Rtnl rt, Link vx, int vni, Underlay u) {
        if (!"vxlan".equals(vx.kind())) return false;
        Optional<VxlanParams> p = rt.vxlanParams(vx.index());
        return p.isPresent() && p.get().vni() == vni && u.address().equals(p.get().local());
    }

    static Optional<Integer> device(Rtnl rt, int vni) {
        return rt.findLink(ClusterKeys.vxlanDevice(vni)).filter(l -> "vxlan".equals(l.kind())).map(Link::index);
    }

    static void program(Rtnl rt, int index, Peer p) {
        MacAddress mac = MacAddress.parse(p.mac());
        for (IpAddr a : p.addresses()) rt.replaceNeighbor(Neighbor.permanent(index, a, mac));
        rt.replaceNeighbor(Neighbor.fdb(index, mac, p.vtep()));
    }

    static void unprogram(Rtnl rt, int index, Peer p) {
        MacAddress mac = MacAddress.parse(p.mac());
        for (IpAddr a : p.addresses()) ignoreMissing(() -> rt.deleteNeighbor(Neighbor.permanent(index, a, mac)));
        ignoreMissing(() -> rt.deleteFdb(Neighbor.fdb(index, mac, p.vtep())));
    }

    static void delete(Rtnl rt, int vni) {
        device(rt, vni).ifPresent(i -> ignoreMissing(() -> rt.deleteLink(i)));
    }

    private static void ignoreMissing(Runnable r) {
        try {
            r.run();
        } catch (ErrnoException e) {
            if (!e.is(Errno.ENOENT) && !e.is(Errno.ENODEV)) throw e;
        }
    }
}
