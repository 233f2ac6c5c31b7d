package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class AddressRouteTest {

    /** A namespace with lo and a veth end "eth0" up. */
    private static int eth0(Scratch s) {
        s.rt.addLink(NewLink.veth("eth0", "peer0"));
        s.rt.setUp(s.rt.link("lo").index());
        int eth0 = s.rt.link("eth0").index();
        s.rt.setUp(eth0);
        s.rt.setUp(s.rt.link("peer0").index());
        return eth0;
    }

    @Test
    void ipv4AndIpv6Addresses() {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            s.rt.addAddress(eth0, IpAddr.parse("10.22.0.5"), 24, false);
            s.rt.addAddress(eth0, IpAddr.parse("fd00:22::5"), 64, true);

            List<Address> v4 = s.rt.addresses(eth0, Family.INET);
            assertEquals(1, v4.size());
            assertEquals(Cidr.parse("10.22.0.5/24"), v4.getFirst().prefix());
            assertEquals("eth0", v4.getFirst().label());
            List<Address> v6 = s.rt.addresses(eth0, Family.INET6).stream()
                    .filter(a -> !a.address().isLinkLocalUnicast()).toList();
            assertEquals(1, v6.size());
            assertEquals(IpAddr.parse("fd00:22::5"), v6.getFirst().address());
            assertEquals(64, v6.getFirst().prefixLength());
            assertTrue((v6.getFirst().flags() & Address.IFA_F_NODAD) != 0);
            assertTrue((v6.getFirst().flags() & Address.IFA_F_TENTATIVE) == 0, "nodad: usable at once");

            Map<String, Object> j = s.ipJson("addr", "show", "dev", "eth0").getFirst();
            String addrs = Json.asList(j.get("addr_info")).stream().map(Json::asObject)
                    .map(a -> a.get("local") + "/" + a.get("prefixlen") + (a.get("broadcast") != null ? " brd " + a.get("broadcast") : ""))
                    .collect(Collectors.joining(","));
            assertTrue(addrs.contains("10.22.0.5/24 brd 10.22.0.255"), addrs);
            assertTrue(addrs.contains("fd00:22::5/64"), addrs);
            assertTrue(s.ip("-6", "addr", "show", "dev", "eth0").contains("nodad"));

            ErrnoException dup = assertThrows(ErrnoException.class, () -> s.rt.addAddress(eth0, IpAddr.parse("10.22.0.5"), 24, false));
            assertEquals(Errno.EEXIST, dup.errno());

            s.rt.deleteAddress(eth0, IpAddr.parse("10.22.0.5"), 24);
            s.rt.deleteAddress(eth0, IpAddr.parse("fd00:22::5"), 64);
            assertEquals(List.of(), s.rt.addresses(eth0, Family.INET));
            ErrnoException gone = assertThrows(ErrnoException.class, () -> s.rt.deleteAddress(eth0, IpAddr.parse("10.22.0.5"), 24));
            assertEquals(Errno.EADDRNOTAVAIL, gone.errno());
        }
    }

    @Test
    void routesWithGatewayScopeTableMetricMetricsAndSource() {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            s.rt.addAddress(eth0, IpAddr.parse("10.22.0.5"), 24, false);
            s.rt.addAddress(eth0, IpAddr.parse("fd00:22::5"), 64, true);

            s.rt.addRoute(Route.defaultVia(IpAddr.parse("10.22.0.1")).dev(eth0));
            s.rt.addRoute(Route.to(Cidr.parse("10.30.0.0/16")).via(IpAddr.parse("10.22.0.1")).metric(50).mtu(1400).advmss(1360)
                    .protocol(Route.PROTO_STATIC));
            s.rt.addRoute(Route.to(Cidr.parse("10.40.0.0/16")).dev(eth0).scope(Route.SCOPE_LINK).src(IpAddr.parse("10.22.0.5")));
            s.rt.addRoute(Route.to(Cidr.parse("10.50.0.0/24")).dev(eth0).table(100));
            s.rt.addRoute(Route.to(Cidr.parse("10.60.0.7/32")).dev(eth0).scope(Route.SCOPE_HOST));
            s.rt.addRoute(Route.defaultVia(IpAddr.parse("fd00:22::1")).dev(eth0).metric(1024));

            Map<String, Map<String, Object>> main = s.ipJson("route", "show").stream()
                    .collect(Collectors.toMap(r -> (String) r.get("dst"), r -> r));
            assertEquals("10.22.0.1", main.get("default").get("gateway"));
            assertEquals("eth0", main.get("default").get("dev"));
            Map<String, Object> r30 = main.get("10.30.0.0/16");
            assertEquals(50L, r30.get("metric"));
            assertEquals("static", r30.get("protocol"));
            String metrics = String.valueOf(r30.get("metrics"));
            assertTrue(metrics.contains("1400") && metrics.contains("1360"), metrics);
            assertEquals("link", main.get("10.40.0.0/16").get("scope"));
            assertEquals("10.22.0.5", main.get("10.40.0.0/16").get("prefsrc"));
            assertEquals("host", main.get("10.60.0.7").get("scope"));
            assertEquals("10.50.0.0/24", s.ipJson("route", "show", "table", "100").getFirst().get("dst"));
            assertEquals("fd00:22::1", s.ipJson("-6", "route", "show", "default").getFirst().get("gateway"));

            List<Route> mine = s.rt.routes(Family.INET, Route.TABLE_MAIN);
            Route def = mine.stream().filter(Route::isDefault).findFirst().orElseThrow();
            assertEquals(IpAddr.parse("10.22.0.1"), def.gateway());
            assertEquals(eth0, def.oif());
            assertEquals(Route.PROTO_BOOT, def.protocol());
            Route m30 = mine.stream().filter(r -> r.dst().equals(Cidr.parse("10.30.0.0/16"))).findFirst().orElseThrow();
            assertEquals(50, m30.priority());
            assertEquals(1400, m30.mtu());
            assertEquals(1360, m30.advmss());
            Route m40 = mine.stream().filter(r -> r.dst().equals(Cidr.parse("10.40.0.0/16"))).findFirst().orElseThrow();
            assertEquals(Route.SCOPE_LINK, m40.scope());
            assertEquals(IpAddr.parse("10.22.0.5"), m40.src());
            assertEquals(1, s.rt.routes(Family.INET, 100).size());
            Route v6 = s.rt.routes(Family.INET6, Route.TABLE_MAIN).stream().filter(Route::isDefault).findFirst().orElseThrow();
            assertEquals(IpAddr.parse("fd00:22::1"), v6.gateway());
            assertEquals(1024, v6.priority());

            ErrnoException dup = assertThrows(ErrnoException.class,
                    () -> s.rt.addRoute(Route.defaultVia(IpAddr.parse("10.22.0.1")).dev(eth0)));
            assertEquals(Errno.EEXIST, dup.errno());
            assertTrue(dup.getMessage().startsWith("add route default via 10.22.0.1"), dup.getMessage());

            s.rt.replaceRoute(Route.defaultVia(IpAddr.parse("10.22.0.254")).dev(eth0));
            assertEquals("10.22.0.254", s.ipJson("route", "show", "default").getFirst().get("gateway"));

            s.rt.deleteRoute(Route.defaultRoute(Family.INET));
            s.rt.deleteRoute(Route.to(Cidr.parse("10.50.0.0/24")).table(100));
            assertEquals(List.of(), s.ipJson("route", "show", "default"));
            assertEquals(List.of(), s.ipJson("route", "show", "table", "100"));
            ErrnoException missing = assertThrows(ErrnoException.class, () -> s.rt.deleteRoute(Route.to(Cidr.parse("10.99.0.0/16"))));
            assertEquals(Errno.ESRCH, missing.errno());
        }
    }

    @Test
    void unreachableGatewayIsAnError() {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            ErrnoException e = assertThrows(ErrnoException.class,
                    () -> s.rt.addRoute(Route.defaultVia(IpAddr.parse("10.9.9.1")).dev(eth0)));
            assertEquals(Errno.ENETUNREACH, e.errno());
        }
    }

    @Test
    void largeDumpsSpanManyDatagrams() throws Exception {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            int n = 1500; // far more than one 32 KiB dump datagram holds
            for (int i = 0; i < n; i++) {
                s.rt.addRoute(Route.to(new Cidr(new IpAddr(new byte[] {10, (byte) (i >> 8), (byte) i, 0}), 24)).dev(eth0).table(200));
            }
            assertEquals(n, s.rt.routes(Family.INET, 200).size());
            assertEquals(n, s.ipJson("route", "show", "table", "200").size());
        }
    }

    @Test
    void oneClientServesManyThreads() throws Exception {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            java.util.List<Thread> threads = new java.util.ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger ok = new java.util.concurrent.atomic.AtomicInteger();
            for (int t = 0; t < 8; t++) {
                int base = t;
                threads.add(Thread.ofVirtual().start(() -> {
                    for (int i = 0; i < 25; i++) {
                        s.rt.addAddress(eth0, IpAddr.parse("10.9." + base + "." + (i + 1)), 32, false);
                        if (s.rt.link(eth0).index() == eth0) ok.incrementAndGet();
                    }
                }));
            }
            for (Thread t : threads) t.join(30_000);
            assertEquals(200, ok.get());
            assertEquals(200, s.rt.addresses(eth0, Family.INET).size());
        }
    }

    @Test
    void settleWaitsForDuplicateAddressDetection() {
        try (Scratch s = Scratch.create()) {
            int eth0 = eth0(s);
            s.rt.setArp(eth0, false);
            assertTrue((s.rt.link(eth0).flags() & Link.IFF_NOARP) != 0);
            assertTrue(String.valueOf(s.ipJson("link", "show", "dev", "eth0").getFirst().get("flags")).contains("NOARP"));
            s.rt.setArp(eth0, true);
            Sysctl.set(s.ns, "net.ipv6.conf.eth0.dad_transmits", "1");
            Sysctl.set(s.ns, "net.ipv6.neigh.eth0.retrans_time_ms", "200");
            s.rt.addAddress(eth0, IpAddr.parse("fd00:33::5"), 64, false);
            assertTrue(s.rt.addresses(eth0, Family.INET6).stream()
                    .anyMatch(a -> (a.flags() & Address.IFA_F_TENTATIVE) != 0), "DAD pending right after add");
            s.rt.settleAddresses(eth0, 10_000);
            assertTrue(s.rt.addresses(eth0, Family.INET6).stream()
                    .noneMatch(a -> (a.flags() & Address.IFA_F_TENTATIVE) != 0));
        }
    }
}
