package io.jcni.docker.cluster;

import io.jcni.linux.Address;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Optional;

/**
 * The interface and address VXLAN packets leave by, chosen as the overlay agent's flags say:
 * {@code --iface} (a name or one of its IPv4 addresses), {@code --public-ip} (the address other
 * hosts reach this one on), or else the interface of the default route and its first IPv4 address.
 *
 * @param mtu the interface's MTU now (a cluster network's MTU is this minus {@link ClusterKeys#VXLAN_OVERHEAD})
 */
public record Underlay(int index, String name, IpAddr address, int mtu) {

    public static Underlay find(Rtnl rt, String iface, String publicIp) {
        IpAddr pub = publicIp == null || publicIp.isEmpty() ? null : IpAddr.parse(publicIp);
        Link link = null;
        if (iface != null && !iface.isEmpty()) {
            IpAddr asAddress = IpAddr.tryParse(iface);
            link = asAddress == null ? rt.findLink(iface).orElseThrow(() -> new IllegalArgumentException("--iface " + iface + ": no such interface"))
                    : holding(rt, asAddress).orElseThrow(() -> new IllegalArgumentException("--iface " + iface + ": no interface has that address"));
        } else if (pub != null) {
            link = holding(rt, pub).orElse(null);
        }
        if (link == null) {
            int oif = rt.routes(Family.INET).stream().filter(Route::isDefault).mapToInt(Route::oif).filter(i -> i > 0).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no --iface, and no default route to find the VXLAN underlay by"));
            link = rt.link(oif);
        }
        IpAddr address = pub;
        if (address == null) {
            List<Address> v4 = rt.addresses(link.index(), Family.INET);
            if (v4.isEmpty()) throw new IllegalArgumentException("the underlay " + link.name() + " has no IPv4 address; give --public-ip");
            address = v4.getFirst().address();
        }
        return new Underlay(link.index(), link.name(), address, link.mtu());
    }

    private static Optional<Link> holding(Rtnl rt, IpAddr a) {
        for (Link l : rt.links()) {
            for (Address x : rt.addresses(l.index(), Family.of(a))) if (x.address().equals(a)) return Optional.of(l);
        }
        return Optional.empty();
    }
}
