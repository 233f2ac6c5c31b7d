package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What the kernel gets for one family of one remote lease. Pure: {@link Dataplane} turns it into
 * netlink requests. Over VXLAN (flanneld's vxlan backend, per family on {@code flannel.<VNI>} or
 * {@code flannel-v6.<VNI>}): route {@code dst via <dst's network address> dev <device> onlink}, a
 * permanent neighbour (that address → {@code vtepMac}) and a static FDB entry ({@code vtepMac} →
 * {@code vtepDst}, the host's PublicIP or PublicIPv6). Otherwise (host-gw, or vxlan's
 * DirectRouting to a host on the underlay's L2): route {@code dst via <host's address> dev <underlay>}.
 *
 * @param via     the gateway: the subnet's network address over VXLAN, the host's public address otherwise
 * @param vtepMac the remote VTEP's MAC (a vxlan lease's, also when routed directly: its old entries are removed; else null)
 * @param vtepDst the FDB entry's destination (with {@code vtepMac})
 */
public record RemotePlan(Cidr dst, IpAddr via, boolean overVxlan, String vtepMac, IpAddr vtepDst) {

    public boolean isV6() {
        return dst.isV6();
    }

    /**
     * The entries for {@code r} in a network of {@code cfg}: per family both sides have (the
     * network's, and the lease's), IPv4 first.
     *
     * @param onLink whether a public address is on one of the underlay's connected networks (DirectRouting)
     */
    public static List<RemotePlan> of(Lease r, NetworkConfig cfg, Predicate<IpAddr> onLink) {
        return of(r, cfg.ipv4(), cfg.ipv6(), cfg.backend(), onLink);
    }

    /** The same, with the network's families and backend given one by one. */
    public static List<RemotePlan> of(Lease r, boolean ipv4, boolean ipv6, NetworkConfig.Backend backend, Predicate<IpAddr> onLink) {
        List<RemotePlan> plans = new ArrayList<>(2);
        if (ipv4 && r.hasV4()) plans.add(one(r.subnet(), r.publicIp(), r.vtepMac(), backend, onLink));
        if (ipv6 && r.hasV6()) plans.add(one(r.ipv6Subnet(), r.publicIpv6(), r.vtepMacV6(), backend, onLink));
        return plans;
    }

    private static RemotePlan one(Cidr subnet, IpAddr publicIp, String mac, NetworkConfig.Backend backend, Predicate<IpAddr> onLink) {
        Cidr dst = subnet.masked();
        if (backend instanceof NetworkConfig.Vxlan v) {
            if (v.directRouting() && onLink.test(publicIp)) return new RemotePlan(dst, publicIp, false, mac, publicIp);
            return new RemotePlan(dst, dst.network(), true, mac, publicIp);
        }
        return new RemotePlan(dst, publicIp, false, null, null);
    }
}
