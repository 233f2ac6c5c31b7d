package io.jcni.overlay;

import static io.jcni.overlay.RemoteCheck.Missing.FDB;
import static io.jcni.overlay.RemoteCheck.Missing.NEIGHBOUR;
import static io.jcni.overlay.RemoteCheck.Missing.NEXTHOP;
import static io.jcni.overlay.RemoteCheck.Missing.ROUTE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jcni.linux.MacAddress;
import io.jcni.linux.Neighbor;
import io.jcni.linux.Nexthop;
import io.jcni.linux.Route;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What a kernel snapshot lacks of the programmed remotes: the kernel as dumps return it, built by hand. */
class RemoteCheckTest {
    private static final int VXLAN = 5, VXLAN6 = 6, UNDERLAY = 2;
    private static final NexthopIds IDS = NexthopIds.of(NetworkConfig.parse("""
            {"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00:10:5::/48","Backend":{"Type":"vxlan"}}"""));

    private static Lease lease(int n) {
        return new Lease(Cidr.parse("10.5." + n + ".0/24"), IpAddr.parse("192.168.77." + n), "vxlan", 1, mac(n, 4),
                Cidr.parse("fd00:10:5:" + n + "::/64"), IpAddr.parse("fd77::" + n), mac(n, 6));
    }

    private static String mac(int n, int family) {
        return "02:aa:00:00:0" + family + ":" + String.format("%02x", n);
    }

    /** Per family, what the VXLAN dataplane expects: the route through its nexthop, the neighbour, the FDB entry. */
    private static List<RemoteCheck.Expected> overVxlan(Lease l) {
        List<RemoteCheck.Expected> out = new ArrayList<>();
        for (RemotePlan p : RemotePlan.of(l, true, true, new NetworkConfig.Vxlan(1, 0, 0, false, false, false), ip -> false)) {
            int dev = p.isV6() ? VXLAN6 : VXLAN;
            MacAddress vtep = MacAddress.parse(p.vtepMac());
            out.add(new RemoteCheck.Expected(p.dst(), p.via(), dev, IDS.id(p.dst()), dev, Neighbor.permanent(dev, p.via(), vtep),
                    Neighbor.fdb(dev, vtep, p.vtepDst())));
        }
        return out;
    }

    /** The kernel holding everything the dataplane made for {@code leases}. */
    private static Kernel whole(Lease... leases) {
        Kernel k = new Kernel();
        for (Lease l : leases) {
            for (RemoteCheck.Expected e : overVxlan(l)) {
                k.routes.add(nhidRoute(e));
                k.nexthops.add(Nexthop.via(e.nhid(), e.via()).dev(e.oif()).onlink().protocol(Dataplane.ROUTE_PROTOCOL));
                k.neighbours.add(e.neighbour());
                k.fdb.add(e.fdb());
            }
        }
        return k;
    }

    /** As a dump shows an nhid route: the nexthop's gateway and device, our protocol, the family's default metric. */
    private static Route nhidRoute(RemoteCheck.Expected e) {
        return Route.to(e.dst()).via(e.via()).dev(e.oif()).nexthop(e.nhid()).protocol(Dataplane.ROUTE_PROTOCOL)
                .table(Route.TABLE_MAIN).metric(e.dst().isV6() ? Dataplane.IPV6_DEFAULT_METRIC : 0);
    }

    private static final class Kernel {
        final List<Route> routes = new ArrayList<>();
        final List<Nexthop> nexthops = new ArrayList<>();
        final List<Neighbor> neighbours = new ArrayList<>();
        final List<Neighbor> fdb = new ArrayList<>();

        RemoteCheck.Kernel snapshot() {
            return new RemoteCheck.Kernel(routes, nexthops, neighbours, fdb);
        }

        void dropDevice(int dev) {
            routes.removeIf(r -> r.oif() == dev);
            nexthops.removeIf(nh -> nh.oif() == dev);
            neighbours.removeIf(n -> n.index() == dev);
        }
    }

    private static Map<Cidr, Set<RemoteCheck.Missing>> missing(List<Lease> programmed, Kernel k) {
        return RemoteCheck.missing(programmed, RemoteCheckTest::overVxlan, k.snapshot());
    }

    @Test
    void aKernelHoldingEverythingLacksNothing() {
        assertEquals(Map.of(), missing(List.of(lease(2), lease(3)), whole(lease(2), lease(3))));
    }

    @Test
    void aFlappedDeviceLosesRoutesNexthopsAndNeighboursOfItsFamilyOnly() {
        Kernel k = whole(lease(2), lease(3));
        k.dropDevice(VXLAN); // flannel.1 down and up: its routes, nexthops and neighbours are gone, permanent FDB entries stay
        assertEquals(Map.of(lease(2).id(), EnumSet.of(ROUTE, NEXTHOP, NEIGHBOUR), lease(3).id(), EnumSet.of(ROUTE, NEXTHOP, NEIGHBOUR)),
                missing(List.of(lease(2), lease(3)), k));
        assertEquals("route,nexthop,neighbour", RemoteCheck.describe(EnumSet.of(NEIGHBOUR, ROUTE, NEXTHOP)));

        Kernel v6 = whole(lease(2));
        v6.dropDevice(VXLAN6);
        v6.fdb.removeIf(f -> f.index() == VXLAN6);
        assertEquals(Map.of(lease(2).id(), EnumSet.of(ROUTE, NEXTHOP, NEIGHBOUR, FDB)), missing(List.of(lease(2)), v6));
    }

    @Test
    void anAdminsRouteDelLosesTheRouteOnly() {
        Kernel k = whole(lease(2), lease(3));
        k.routes.removeIf(r -> r.dst().equals(lease(3).subnet()));
        assertEquals(Map.of(lease(3).id(), EnumSet.of(ROUTE)), missing(List.of(lease(2), lease(3)), k));
    }

    @Test
    void anEntryThatIsNoLongerWhatWasProgrammedCountsAsMissing() {
        Kernel k = whole(lease(2));
        RemoteCheck.Expected v4 = overVxlan(lease(2)).get(0);
        // flanneld's RouteReplace over ours (a plain route through flannel.1): ours to put back through the nexthop
        k.routes.replaceAll(r -> r.dst().equals(v4.dst()) ? Route.to(v4.dst()).via(v4.via()).dev(VXLAN).onlink().protocol(Route.PROTO_BOOT)
                .table(Route.TABLE_MAIN).metric(0) : r);
        // the nexthop moved to another gateway, the neighbour is no longer permanent, the FDB entry points elsewhere
        k.nexthops.replaceAll(nh -> nh.id() == v4.nhid() ? Nexthop.via(nh.id(), IpAddr.parse("10.5.9.0")).dev(VXLAN).onlink() : nh);
        k.neighbours.replaceAll(n -> n.equals(v4.neighbour()) ? new Neighbor(VXLAN, n.family(), n.address(), n.mac(), Neighbor.NUD_STALE, 0) : n);
        k.fdb.replaceAll(f -> f.equals(v4.fdb()) ? Neighbor.fdb(VXLAN, f.mac(), IpAddr.parse("192.168.77.99")) : f);
        assertEquals(Map.of(lease(2).id(), EnumSet.of(ROUTE, NEXTHOP, NEIGHBOUR, FDB)), missing(List.of(lease(2)), k));
    }

    @Test
    void aRouteJcniDidNotInstallLeavesThatFamilyAlone() {
        Kernel k = whole(lease(2), lease(3));
        k.dropDevice(VXLAN);
        // an operator's route now holds host 2's IPv4 subnet: not jcni's to touch, whatever else is gone
        k.routes.add(Route.to(lease(2).subnet()).via(IpAddr.parse("192.168.77.9")).dev(UNDERLAY).protocol(Route.PROTO_STATIC)
                .table(Route.TABLE_MAIN).metric(0));
        assertEquals(Map.of(lease(3).id(), EnumSet.of(ROUTE, NEXTHOP, NEIGHBOUR)), missing(List.of(lease(2), lease(3)), k));
    }

    @Test
    void routesOfOtherTablesAndMetricsAreNotTheSubnetsRoute() {
        Kernel k = whole(lease(2));
        RemoteCheck.Expected v4 = overVxlan(lease(2)).get(0);
        k.routes.removeIf(r -> r.dst().equals(v4.dst()));
        k.routes.add(nhidRoute(v4).table(100)); // another table's copy does not route the main table's traffic
        k.routes.add(Route.to(v4.dst()).via(IpAddr.parse("192.168.77.9")).dev(UNDERLAY).protocol(Route.PROTO_STATIC)
                .table(Route.TABLE_MAIN).metric(100)); // an operator's backup route with a metric: another key, not in the way
        assertEquals(Map.of(lease(2).id(), EnumSet.of(ROUTE)), missing(List.of(lease(2)), k));
    }

    @Test
    void plainRoutesAndHostGwAreCheckedByGatewayAndDevice() {
        Lease hostGw = new Lease(Cidr.parse("10.5.2.0/24"), IpAddr.parse("192.168.77.2"), "host-gw", 0, null);
        RemoteCheck.Expected plain = new RemoteCheck.Expected(hostGw.subnet(), hostGw.publicIp(), UNDERLAY, 0, 0, null, null);
        Kernel k = new Kernel();
        k.routes.add(Route.to(plain.dst()).via(plain.via()).dev(UNDERLAY).protocol(Dataplane.ROUTE_PROTOCOL).table(Route.TABLE_MAIN).metric(0));
        assertEquals(Map.of(), RemoteCheck.missing(List.of(hostGw), l -> List.of(plain), k.snapshot()));

        k.routes.clear(); // the underlay flapped
        assertEquals(Map.of(hostGw.id(), EnumSet.of(ROUTE)), RemoteCheck.missing(List.of(hostGw), l -> List.of(plain), k.snapshot()));

        // jcni's own route via another host (the lease moved): ours, and not what is programmed
        k.routes.add(Route.to(plain.dst()).via(IpAddr.parse("192.168.77.3")).dev(UNDERLAY).protocol(Dataplane.ROUTE_PROTOCOL).table(Route.TABLE_MAIN).metric(0));
        assertEquals(Map.of(hostGw.id(), EnumSet.of(ROUTE)), RemoteCheck.missing(List.of(hostGw), l -> List.of(plain), k.snapshot()));
    }
}
