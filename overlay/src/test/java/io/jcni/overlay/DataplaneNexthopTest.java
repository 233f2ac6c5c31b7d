package io.jcni.overlay;

import static io.jcni.overlay.RemoteCheck.Missing.NEXTHOP;
import static io.jcni.overlay.RemoteCheck.Missing.ROUTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The dataplane's remote routes through nexthop objects, in a scratch namespace, read back with
 * {@code ip}: VXLAN for both families and host-gw; a plain route an earlier version or flanneld
 * left is taken over, flanneld's own RouteReplace still works over jcni's route, a foreign route
 * is left alone, removal and the sweep leave nothing of jcni's and nothing else touched; the route
 * check's dumps find what a flap (VXLAN devices, the underlay) or an admin took, and not a foreign route.
 */
@Tag("root")
class DataplaneNexthopTest {
    static final IpAddr LOCAL = IpAddr.parse("192.168.77.2");
    static final NetworkConfig CFG = NetworkConfig.parse("""
            {"Network":"10.5.0.0/16","EnableIPv6":true,"IPv6Network":"fd00:10:5::/48","Backend":{"Type":"vxlan"}}""");
    static final String MAC2 = "02:aa:00:00:00:02", MAC2V6 = "02:aa:00:00:06:02", MAC3 = "02:aa:00:00:00:03";

    private static Lease vxlanLease(int n, String mac, String macV6) {
        return new Lease(Cidr.parse("10.5." + n + ".0/24"), IpAddr.parse("192.168.77." + n), "vxlan", 1, mac,
                macV6 == null ? null : Cidr.parse("fd00:10:5:" + n + "::/64"), macV6 == null ? null : IpAddr.parse("fd77::" + n), macV6);
    }

    @Test
    void vxlanRoutesGoThroughNexthopObjectsAndInteroperateWithFlanneldsRoutes() {
        String name = "jnh-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffL);
        try (Netns ns = Netns.create(name); Rtnl rt = Rtnl.open(ns)) {
            Link under = underlay(rt);
            List<String> notices = new ArrayList<>();
            NexthopIds ids = NexthopIds.of(CFG);
            var dp = new Dataplane.Vxlan(rt, (NetworkConfig.Vxlan) CFG.backend(), LOCAL, IpAddr.parse("fd77::2"), under, notices::add,
                    List::of, ids);
            dp.local(Cidr.parse("10.5.1.0/24"), Cidr.parse("fd00:10:5:1::/64"));
            dp.activate(Cidr.parse("10.5.1.0/24"), Cidr.parse("fd00:10:5:1::/64"));

            Lease two = vxlanLease(2, MAC2, MAC2V6);
            assertTrue(dp.add(two));
            int id2 = ids.id(Cidr.parse("10.5.2.0/24")), id2v6 = ids.id(Cidr.parse("fd00:10:5:2::/64"));
            assertEquals("10.5.2.0/24 nhid " + id2 + " via 10.5.2.0 dev flannel.1 proto 74 onlink", ip(name, "route", "show", "10.5.2.0/24"));
            assertTrue(ip(name, "-6", "route", "show", "fd00:10:5:2::/64").startsWith("fd00:10:5:2::/64 nhid " + id2v6 + " via fd00:10:5:2:: dev flannel-v6.1 proto 74"),
                    ip(name, "-6", "route", "show", "fd00:10:5:2::/64"));
            assertTrue(ip(name, "nexthop", "show", "id", Integer.toString(id2)).contains("via 10.5.2.0 dev flannel.1 scope link proto 74 onlink"));
            assertTrue(ip(name, "neigh", "show", "dev", "flannel.1").contains("10.5.2.0 lladdr " + MAC2 + " PERMANENT"));
            assertTrue(Lab.sh("bridge", "-n", name, "fdb", "show", "dev", "flannel.1").contains(MAC2 + " dst 192.168.77.2 self permanent")
                    || Lab.sh("bridge", "-n", name, "fdb", "show", "dev", "flannel.1").contains(MAC2 + " dst 192.168.77.2"));

            // A host going back to flanneld: its RouteReplace of the same destination works over jcni's route.
            Lab.sh("ip", "-n", name, "route", "replace", "10.5.2.0/24", "via", "10.5.2.0", "dev", "flannel.1", "onlink");
            assertEquals("10.5.2.0/24 via 10.5.2.0 dev flannel.1 onlink", ip(name, "route", "show", "10.5.2.0/24"));
            // ... and back to jcni (a restart or resync adds the lease again): flanneld's route on flannel.1 is taken over.
            assertTrue(dp.add(two));
            assertEquals("10.5.2.0/24 nhid " + id2 + " via 10.5.2.0 dev flannel.1 proto 74 onlink", ip(name, "route", "show", "10.5.2.0/24"));

            // An earlier jcni's plain route (proto 74) is replaced by one through a nexthop.
            Lab.sh("ip", "-n", name, "route", "add", "10.5.3.0/24", "via", "10.5.3.0", "dev", "flannel.1", "onlink", "proto", "74");
            assertTrue(dp.add(vxlanLease(3, MAC3, null)));
            assertTrue(ip(name, "route", "show", "10.5.3.0/24").startsWith("10.5.3.0/24 nhid " + ids.id(Cidr.parse("10.5.3.0/24"))));

            // A route jcni did not make holds a subnet: left alone, and no nexthop stays behind for it.
            Lab.sh("ip", "-n", name, "route", "add", "10.5.4.0/24", "via", "192.168.77.9", "dev", "under0");
            assertFalse(dp.add(vxlanLease(4, "02:aa:00:00:00:04", null)));
            assertEquals("10.5.4.0/24 via 192.168.77.9 dev under0", ip(name, "route", "show", "10.5.4.0/24"));
            assertFalse(ip(name, "nexthop", "show").contains("id " + ids.id(Cidr.parse("10.5.4.0/24")) + " "), ip(name, "nexthop", "show"));

            dp.remove(two);
            assertEquals("", ip(name, "route", "show", "10.5.2.0/24"));
            assertEquals("", ip(name, "-6", "route", "show", "fd00:10:5:2::/64"));
            assertFalse(ip(name, "neigh", "show", "dev", "flannel.1").contains("10.5.2.0"));
            assertFalse(Lab.sh("bridge", "-n", name, "fdb", "show", "dev", "flannel.1").contains(MAC2));
            dp.remove(two); // again: nothing left to remove is fine

            // The sweep after a full list: jcni's nexthops of subnets no longer programmed go (with
            // their routes); another owner's nexthop, in or out of the range, stays.
            Lab.sh("ip", "-n", name, "nexthop", "add", "id", "77", "via", "192.168.77.9", "dev", "under0");
            Lab.sh("ip", "-n", name, "nexthop", "add", "id", Integer.toString(NexthopIds.V4_BASE + 9), "via", "192.168.77.9", "dev", "under0");
            assertEquals(0, dp.sweep(List.of(vxlanLease(3, MAC3, null))));
            assertEquals(1, dp.sweep(List.of()));
            assertEquals("", ip(name, "route", "show", "10.5.3.0/24"));
            assertTrue(ip(name, "nexthop", "show").contains("id 77 "));
            assertTrue(ip(name, "nexthop", "show").contains("id " + (NexthopIds.V4_BASE + 9) + " "));
            assertEquals(List.of(), notices);
        } finally {
            Netns.delete(name);
        }
    }

    @Test
    void hostGwRoutesGoThroughNexthopsAndPlainOnesWithoutThem() {
        String name = "jnh-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffL);
        try (Netns ns = Netns.create(name); Rtnl rt = Rtnl.open(ns)) {
            Link under = underlay(rt);
            NetworkConfig hostGw = NetworkConfig.parse("""
                    {"Network":"10.5.0.0/16","Backend":{"Type":"host-gw"}}""");
            NexthopIds ids = NexthopIds.of(hostGw);
            var dp = new Dataplane.HostGw(rt, LOCAL, null, under, ids, s -> {});
            Lease two = new Lease(Cidr.parse("10.5.2.0/24"), IpAddr.parse("192.168.77.3"), "host-gw", 0, null);
            assertTrue(dp.add(two));
            assertEquals("10.5.2.0/24 nhid " + ids.id(two.subnet()) + " via 192.168.77.3 dev under0 proto 74", ip(name, "route", "show", "10.5.2.0/24"));
            // The route check's dumps: the underlay down and up takes the route and its nexthop; the add puts them back.
            assertEquals(Map.of(), dp.missing(List.of(two)));
            Lab.sh("ip", "-n", name, "link", "set", "under0", "down");
            Lab.sh("ip", "-n", name, "link", "set", "under0", "up");
            assertEquals(Map.of(two.id(), EnumSet.of(ROUTE, NEXTHOP)), dp.missing(List.of(two)));
            assertTrue(dp.add(two));
            assertEquals(Map.of(), dp.missing(List.of(two)));
            dp.remove(two);
            assertEquals("", ip(name, "route", "show", "10.5.2.0/24"));
            assertEquals("", ip(name, "nexthop", "show"));

            // Without a numbering (or a kernel without nexthop objects): the plain route, as before.
            var plain = new Dataplane.HostGw(rt, LOCAL, null, under);
            assertTrue(plain.add(two));
            assertEquals("10.5.2.0/24 via 192.168.77.3 dev under0 proto 74", ip(name, "route", "show", "10.5.2.0/24"));
            // The nexthop dataplane takes it over (an upgrade), and removes it.
            assertTrue(dp.add(two));
            assertTrue(ip(name, "route", "show", "10.5.2.0/24").startsWith("10.5.2.0/24 nhid "));
            dp.remove(two);
            assertEquals("", ip(name, "route", "show", "10.5.2.0/24"));
        } finally {
            Netns.delete(name);
        }
    }

    /**
     * The route check's dumps against the kernel: an admin's {@code ip route del}, each VXLAN
     * device going down and up (both families), and a foreign route put in place of ours; what
     * {@link Dataplane#missing} finds is what is gone, an add puts it back, and a route jcni did
     * not install is not reported. While the device is down the add fails (the retry's case).
     */
    @Test
    void theCheckFindsWhatTheKernelLostOverVxlanAndAnAddPutsItBack() {
        String name = "jnh-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffL);
        try (Netns ns = Netns.create(name); Rtnl rt = Rtnl.open(ns)) {
            Link under = underlay(rt);
            var dp = new Dataplane.Vxlan(rt, (NetworkConfig.Vxlan) CFG.backend(), LOCAL, IpAddr.parse("fd77::2"), under, s -> {},
                    List::of, NexthopIds.of(CFG));
            dp.local(Cidr.parse("10.5.1.0/24"), Cidr.parse("fd00:10:5:1::/64"));
            dp.activate(Cidr.parse("10.5.1.0/24"), Cidr.parse("fd00:10:5:1::/64"));
            Lease two = vxlanLease(2, MAC2, MAC2V6), three = vxlanLease(3, MAC3, "02:aa:00:00:06:03");
            List<Lease> programmed = List.of(two, three);
            for (Lease l : programmed) assertTrue(dp.add(l));
            assertEquals(Map.of(), dp.missing(programmed));
            String routes = remoteRoutes(name);

            Lab.sh("ip", "-n", name, "route", "del", "10.5.3.0/24");
            assertEquals(Map.of(three.id(), EnumSet.of(ROUTE)), dp.missing(programmed));
            assertTrue(dp.add(three));

            for (String dev : List.of("flannel.1", "flannel-v6.1")) {
                Lab.sh("ip", "-n", name, "link", "set", dev, "down");
                assertThrows(ErrnoException.class, () -> dp.add(two), "the kernel refuses while " + dev + " is down");
                Lab.sh("ip", "-n", name, "link", "set", dev, "up");
                var lost = dp.missing(programmed);
                assertEquals(Set.of(two.id(), three.id()), lost.keySet(), dev + ": " + lost);
                for (var what : lost.values()) assertTrue(what.containsAll(EnumSet.of(ROUTE, NEXTHOP)), dev + ": " + lost);
                for (Lease l : programmed) assertTrue(dp.add(l));
                assertEquals(Map.of(), dp.missing(programmed), dev);
                assertEquals(routes, remoteRoutes(name), dev);
            }

            // An operator's route in place of ours: not jcni's, so nothing is missing for that family.
            Lab.sh("ip", "-n", name, "route", "replace", "10.5.3.0/24", "via", "192.168.77.9", "dev", "under0");
            assertEquals(Map.of(), dp.missing(programmed));
        } finally {
            Netns.delete(name);
        }
    }

    /** The routes to hosts 2 and 3's subnets, both families (the device's own IPv6 address goes with a flap, and its route). */
    private static String remoteRoutes(String name) {
        StringBuilder s = new StringBuilder();
        for (int n = 2; n <= 3; n++) s.append(ip(name, "route", "show", "10.5." + n + ".0/24")).append(ip(name, "-6", "route", "show", "fd00:10:5:" + n + "::/64"));
        return s.toString();
    }

    /** under0: a bridge (no dummy module here) with 192.168.77.2/24 and fd77::2/64, up. */
    private static Link underlay(Rtnl rt) {
        rt.setUp(rt.link("lo").index());
        rt.addLink(NewLink.bridge("under0"));
        Link under = rt.link("under0");
        rt.addAddress(under.index(), LOCAL, 24, false);
        rt.addAddress(under.index(), IpAddr.parse("fd77::2"), 64, true);
        rt.setUp(under.index());
        return rt.link("under0");
    }

    private static String ip(String ns, String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-n", ns));
        cmd.addAll(List.of(args));
        return Lab.sh(cmd.toArray(String[]::new)).trim();
    }
}
