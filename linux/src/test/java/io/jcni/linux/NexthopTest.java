package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Nexthop objects and routes through them in a scratch namespace, cross-checked with {@code ip}. */
@Tag("root")
class NexthopTest {

    /** A VXLAN device as the overlay's flannel.1, up, with a /32 of its own. */
    private static int flannel1(Scratch s) {
        s.rt.setUp(s.rt.link("lo").index());
        s.rt.addLink(NewLink.vxlan("flannel.1", 1).vxlanLocal(IpAddr.parse("192.168.77.2")).vxlanPort(8472).vxlanLearning(false));
        int index = s.rt.link("flannel.1").index();
        s.rt.setUp(index);
        s.rt.addAddress(index, IpAddr.parse("10.5.1.0"), 32, false);
        s.rt.addAddress(index, IpAddr.parse("fd00:10:5:1::"), 128, true);
        return index;
    }

    @Test
    void onlinkNexthopsCarryRoutesAndGoWithThem() {
        try (Scratch s = Scratch.create()) {
            int dev = flannel1(s);
            s.rt.addNexthop(Nexthop.via(7, IpAddr.parse("10.5.2.0")).dev(dev).onlink().protocol(74));
            s.rt.addNexthop(Nexthop.via(0x80000007, IpAddr.parse("fd00:10:5:2::")).dev(dev).onlink().protocol(74));
            s.rt.addRoute(Route.to(Cidr.parse("10.5.2.0/24")).nexthop(7).protocol(74));
            s.rt.addRoute(Route.to(Cidr.parse("fd00:10:5:2::/64")).nexthop(0x80000007).protocol(74));

            assertTrue(s.ip("nexthop", "show", "id", "7").contains("id 7 via 10.5.2.0 dev flannel.1 scope link proto 74 onlink"),
                    s.ip("nexthop", "show", "id", "7"));
            String v4 = s.ip("route", "show", "10.5.2.0/24");
            assertTrue(v4.contains("10.5.2.0/24 nhid 7 via 10.5.2.0 dev flannel.1 proto 74 onlink"), v4);
            String v6 = s.ip("-6", "route", "show", "fd00:10:5:2::/64");
            assertTrue(v6.contains("nhid 2147483655 via fd00:10:5:2:: dev flannel.1 proto 74"), v6);

            Nexthop got = s.rt.nexthop(7).orElseThrow();
            assertEquals(Nexthop.via(7, IpAddr.parse("10.5.2.0")).dev(dev).onlink().protocol(74), got);
            assertEquals(IpAddr.parse("fd00:10:5:2::"), s.rt.nexthop(0x80000007).orElseThrow().gateway());
            assertEquals(2, s.rt.nexthops().size());
            // The dump expands the nexthop: gateway and device, as for a plain route, plus the id.
            Route r = only(s.rt.routes(Family.INET, Route.TABLE_MAIN), Cidr.parse("10.5.2.0/24"));
            assertEquals(7, r.nhid());
            assertEquals(IpAddr.parse("10.5.2.0"), r.gateway());
            assertEquals(dev, r.oif());

            assertEquals(Errno.EEXIST, assertThrows(ErrnoException.class, () -> s.rt.addNexthop(Nexthop.via(7, IpAddr.parse("10.5.3.0")).dev(dev).onlink())).errno());
            // Replacing the object moves every route through it at once.
            s.rt.replaceNexthop(Nexthop.via(7, IpAddr.parse("10.5.3.0")).dev(dev).onlink().protocol(74));
            assertTrue(s.ip("route", "show", "10.5.2.0/24").contains("via 10.5.3.0"), s.ip("route", "show", "10.5.2.0/24"));

            s.rt.deleteNexthop(7);
            assertEquals("", s.ip("route", "show", "10.5.2.0/24").trim(), "the route went with its nexthop");
            assertEquals(Optional.empty(), s.rt.nexthop(7));
            assertEquals(Errno.ENOENT, assertThrows(ErrnoException.class, () -> s.rt.deleteNexthop(7)).errno());
        }
    }

    @Test
    void flannelsRouteReplaceOfTheSameDestinationWorksOverARouteThroughANexthop() {
        // A host going back from jcni to flanneld: flanneld's RouteReplace (dst via gw dev flannel.1
        // onlink, no nhid) takes the place of jcni's route, and the nexthop is left unused.
        try (Scratch s = Scratch.create()) {
            int dev = flannel1(s);
            s.rt.addNexthop(Nexthop.via(7, IpAddr.parse("10.5.2.0")).dev(dev).onlink().protocol(74));
            s.rt.addRoute(Route.to(Cidr.parse("10.5.2.0/24")).nexthop(7).protocol(74));
            s.ip("route", "replace", "10.5.2.0/24", "via", "10.5.2.0", "dev", "flannel.1", "onlink");
            Route r = only(s.rt.routes(Family.INET, Route.TABLE_MAIN), Cidr.parse("10.5.2.0/24"));
            assertEquals(0, r.nhid());
            assertEquals(Route.PROTO_BOOT, r.protocol());
            assertEquals(IpAddr.parse("10.5.2.0"), r.gateway());
            // And jcni coming back replaces flanneld's plain route by its own.
            s.rt.replaceRoute(Route.to(Cidr.parse("10.5.2.0/24")).nexthop(7).protocol(74));
            assertEquals(7, only(s.rt.routes(Family.INET, Route.TABLE_MAIN), Cidr.parse("10.5.2.0/24")).nhid());
        }
    }

    @Test
    void changesGoSeveralToADatagramEachWithItsOwnOutcome() {
        try (Scratch s = Scratch.create()) {
            int dev = flannel1(s);
            RtnlChanges c = new RtnlChanges();
            int n = 300; // several datagrams of NetlinkSocket.PIPELINE
            for (int i = 0; i < n; i++) {
                IpAddr gw = IpAddr.parse("10.6." + (i / 256) + "." + (i % 256));
                c.addNexthop(Nexthop.via(1000 + i, gw).dev(dev).onlink().protocol(74));
                c.addRoute(Route.to(new Cidr(IpAddr.parse("10." + (100 + i / 256) + "." + (i % 256) + ".0"), 24)).nexthop(1000 + i).protocol(74));
            }
            c.addNexthop(Nexthop.via(1000, IpAddr.parse("10.9.9.9")).dev(dev).onlink()); // taken: fails alone
            c.deleteRoute(Route.to(Cidr.parse("10.200.0.0/24"))); // not there
            c.addRoute(Route.to(Cidr.parse("10.201.0.0/24")).nexthop(1000).protocol(74));
            List<ErrnoException> out = s.rt.apply(c);
            assertEquals(2 * n + 3, out.size());
            for (int i = 0; i < 2 * n; i++) assertNull(out.get(i), () -> "change " + out);
            assertEquals(Errno.EEXIST, out.get(2 * n).errno());
            assertTrue(out.get(2 * n).getMessage().contains("add nexthop id 1000"), out.get(2 * n).getMessage());
            assertEquals(Errno.ESRCH, out.get(2 * n + 1).errno());
            assertNull(out.get(2 * n + 2));
            assertEquals(n, s.rt.nexthops().size());
            List<Route> ours = new ArrayList<>();
            for (Route r : s.rt.routes(Family.INET, Route.TABLE_MAIN)) if (r.protocol() == 74) ours.add(r);
            assertEquals(n + 1, ours.size());
        }
    }

    private static Route only(List<Route> routes, Cidr dst) {
        List<Route> found = routes.stream().filter(r -> r.dst().masked().equals(dst)).toList();
        assertEquals(1, found.size(), () -> "routes to " + dst + ": " + routes);
        return found.getFirst();
    }
}
