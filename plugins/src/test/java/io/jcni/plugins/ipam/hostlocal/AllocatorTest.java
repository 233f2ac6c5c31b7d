package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Mirrors upstream's allocator_test.go, over {@link FakeStore}. */
class AllocatorTest {
    static RangeSet set(String... subnets) {
        List<Range> rs = new ArrayList<>();
        for (String s : subnets) rs.add(RangeTest.range(s));
        return RangeSet.of(rs);
    }

    static List<String> walk(Allocator.RangeIterator it) {
        List<String> out = new ArrayList<>();
        for (Allocator.Candidate c = it.next(); c != null; c = it.next()) out.add(c.ip().toString());
        return out;
    }

    @Test
    void iteratesFromTheBeginningTheEndAndTheMiddle() throws Exception {
        RangeSet s = set("192.168.1.0/29");
        assertEquals(List.of("192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"),
                walk(new Allocator(s, new FakeStore(), 0).iterator()));
        assertEquals(List.of("192.168.1.2", "192.168.1.3", "192.168.1.4", "192.168.1.5", "192.168.1.6"),
                walk(new Allocator(s, new FakeStore().last("0", "192.168.1.6"), 0).iterator()));
        assertEquals(List.of("192.168.1.4", "192.168.1.5", "192.168.1.6", "192.168.1.2", "192.168.1.3"),
                walk(new Allocator(s, new FakeStore().last("0", "192.168.1.3"), 0).iterator()));
    }

    record Case(List<String> subnets, List<String> taken, String lastIp, String expect) {}

    @Test
    void allocatesRoundRobinLikeUpstream() throws Exception {
        List<Case> cases = List.of(
                new Case(List.of("10.0.0.0/29"), List.of(), null, "10.0.0.2"),
                new Case(List.of("2001:db8:1::0/64"), List.of(), null, "2001:db8:1::2"),
                new Case(List.of("10.0.0.0/30"), List.of(), null, "10.0.0.2"),
                new Case(List.of("10.0.0.0/29"), List.of("10.0.0.2"), null, "10.0.0.3"),
                new Case(List.of("10.0.0.0/29"), List.of(), "10.0.0.5", "10.0.0.6"),
                new Case(List.of("10.0.0.0/29"), List.of("10.0.0.4", "10.0.0.5"), "10.0.0.3", "10.0.0.6"),
                new Case(List.of("10.0.0.0/29"), List.of("10.0.0.6"), "10.0.0.5", "10.0.0.2"),
                new Case(List.of("10.0.0.0/29"), List.of("10.0.0.2"), "10.0.0.128", "10.0.0.3"),
                new Case(List.of("10.0.0.0/29"), List.of("10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"), "10.0.0.3",
                        "10.0.0.3"),
                new Case(List.of("10.0.0.0/30", "10.0.1.0/30"), List.of(), null, "10.0.0.2"),
                new Case(List.of("10.0.0.0/30", "10.0.1.0/30"), List.of(), "10.0.0.2", "10.0.1.2"),
                new Case(List.of("10.0.0.0/30", "10.0.1.0/30", "10.0.2.0/30"), List.of(), "10.0.2.2", "10.0.0.2"));
        for (Case c : cases) {
            FakeStore store = new FakeStore();
            c.taken().forEach(ip -> store.reserved(ip, "id"));
            if (c.lastIp() != null) store.last("0", c.lastIp());
            Allocation a = new Allocator(set(c.subnets().toArray(String[]::new)), store, 0).get("ID", "eth0", null);
            assertEquals(c.expect(), a.address().toString(), c.toString());
            assertEquals(IpAddr.parse(c.expect()), store.lastReserved.get("0"));
        }
    }

    @Test
    void neverHandsOutGatewayNetworkOrBroadcast() throws Exception {
        FakeStore store = new FakeStore();
        Allocator alloc = new Allocator(set("192.168.1.0/29"), store, 0);
        for (int i = 2; i < 7; i++) {
            Allocation a = alloc.get("ID" + i, "eth0", null);
            assertEquals("192.168.1." + i + "/29", a.cidr());
            assertEquals(IpAddr.parse("192.168.1.1"), a.gateway());
            assertEquals("4", a.version());
        }
        assertEquals("no IP addresses available in range set: 192.168.1.1-192.168.1.6",
                assertThrows(CniException.class, () -> alloc.get("ID8", "eth0", null)).msg());

        // An explicit window covering the network and broadcast addresses and a gateway inside it.
        Range wide = RangeTest.range("10.0.0.0/29", "10.0.0.0", "10.0.0.7", "10.0.0.3");
        FakeStore s2 = new FakeStore();
        Allocator a2 = new Allocator(RangeSet.of(List.of(wide)), s2, 0);
        Set<String> got = new HashSet<>();
        for (int i = 0; i < 5; i++) got.add(a2.get("c" + i, "eth0", null).address().toString());
        assertEquals(Set.of("10.0.0.1", "10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"), got);
        assertThrows(CniException.class, () -> a2.get("c9", "eth0", null));
    }

    @Test
    void roundRobinsAfterRelease() throws Exception {
        FakeStore store = new FakeStore();
        Allocator alloc = new Allocator(set("192.168.1.0/29"), store, 0);
        assertEquals("192.168.1.2/29", alloc.get("ID", "eth0", null).cidr());
        store.releaseById("ID", "eth0");
        assertEquals("192.168.1.3/29", alloc.get("ID", "eth0", null).cidr());
    }

    @Test
    void honoursRequestedIps() throws Exception {
        FakeStore store = new FakeStore();
        Allocator alloc = new Allocator(set("192.168.1.0/29"), store, 0);
        assertEquals("192.168.1.5", alloc.get("ID", "eth0", IpAddr.parse("192.168.1.5")).address().toString());
        assertEquals("requested IP address 192.168.1.5 is not available in range set 192.168.1.1-192.168.1.6",
                assertThrows(CniException.class, () -> alloc.get("ID", "eth0", IpAddr.parse("192.168.1.5")))
                        .msg());
        assertEquals("requested ip 192.168.1.1 is subnet's gateway",
                assertThrows(CniException.class, () -> alloc.get("X", "eth0", IpAddr.parse("192.168.1.1")))
                        .msg());
        assertEquals("192.168.1.7 not in range set 192.168.1.1-192.168.1.6",
                assertThrows(CniException.class, () -> alloc.get("X", "eth0", IpAddr.parse("192.168.1.7")))
                        .msg());
        Allocator narrow = new Allocator(RangeSet.of(List.of(RangeTest.range("192.168.1.0/29", "192.168.1.3", "192.168.1.4", null))),
                new FakeStore(), 0);
        assertThrows(CniException.class, () -> narrow.get("X", "eth0", IpAddr.parse("192.168.1.5")));
        assertThrows(CniException.class, () -> narrow.get("X", "eth0", IpAddr.parse("192.168.1.2")));
    }

    @Test
    void refusesDuplicateAllocationForTheSameAttachment() throws Exception {
        FakeStore store = new FakeStore();
        Allocator alloc = new Allocator(set("10.0.0.0/24"), store, 0);
        alloc.get("dummy", "eth0", null);
        assertEquals("10.0.0.2 has been allocated to dummy, duplicate allocation is not allowed",
                assertThrows(CniException.class, () -> alloc.get("dummy", "eth0", null)).msg());
        assertEquals("10.0.0.3", alloc.get("dummy", "eth1", null).address().toString());
        assertEquals("10.0.0.4", alloc.get("dummy1", "eth0", null).address().toString());
    }

    @Test
    void exhaustionAcrossRanges() {
        for (FakeStore store : List.of(new FakeStore().reserved("10.0.0.2", "id"),
                new FakeStore().reserved("10.0.0.2", "id").reserved("10.0.1.2", "id"))) {
            RangeSet s = store.reservations.size() == 1 ? set("10.0.0.0/30") : set("10.0.0.0/30", "10.0.1.0/30");
            String msg = assertThrows(CniException.class, () -> new Allocator(s, store, 0).get("ID", "eth0", null))
                    .msg();
            assertEquals("no IP addresses available in range set: " + s, msg);
        }
    }

    @Test
    void startsAfterTheEndOfOneOfSeveralRanges() throws Exception {
        RangeSet s = RangeSet.of(List.of(RangeTest.range("192.168.1.0/30", "192.168.1.1", "192.168.1.2", null),
                RangeTest.range("192.168.2.0/30", "192.168.2.1", "192.168.2.2", null)));
        assertEquals(List.of("192.168.2.2", "192.168.1.2"),
                walk(new Allocator(s, new FakeStore().last("0", "192.168.1.2"), 0).iterator()));
    }

    @Test
    void listsReservedNamesOnceThroughADenseStretch() throws Exception {
        FakeStore store = new FakeStore();
        for (int i = 2; i < 1000; i++) store.reserved(IpAddr.parse("10.0.0.0").add(i).toString(), "x");
        Allocation a = new Allocator(set("10.0.0.0/16"), store, 0).get("ID", "eth0", null);
        assertEquals("10.0.3.232", a.address().toString());
        assertEquals(1, store.listings);
        assertTrue(store.reserveCalls <= Allocator.COLLISIONS_BEFORE_LISTING + 1, "reserve calls " + store.reserveCalls);
    }

    static LongStream seeds() {
        return LongStream.range(0, 25);
    }

    /**
     * Property: over random range sets, random pre-existing reservations and a random last
     * reserved address, allocating until exhaustion hands out every allocatable free address
     * exactly once, never a gateway/network/broadcast, and then fails with the upstream message.
     */
    @ParameterizedTest
    @MethodSource("seeds")
    void allocatesEveryFreeAddressExactlyOnce(long seed) throws Exception {
        Random rnd = new Random(seed);
        boolean v6 = rnd.nextBoolean();
        List<Range> ranges = new ArrayList<>();
        int n = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
            int prefix = v6 ? 122 + rnd.nextInt(5) : 26 + rnd.nextInt(5);
            String subnet = v6 ? "2001:db8:" + i + "::/" + prefix : "10." + i + ".0.0/" + prefix;
            Cidr c = Cidr.parse(subnet);
            IpAddr start = rnd.nextBoolean() ? c.network().next().next() : null;
            ranges.add(Range.canonicalize(c, start, null, null));
        }
        RangeSet s = RangeSet.of(ranges);
        FakeStore store = new FakeStore();
        Set<IpAddr> expected = new HashSet<>();
        for (Range r : s.ranges()) {
            for (IpAddr ip = r.rangeStart(); ip.compareTo(r.rangeEnd()) <= 0; ip = ip.next()) {
                if (!r.isAllocatable(ip)) continue;
                if (rnd.nextInt(4) == 0) store.reserved(ip.toString(), "other");
                else expected.add(ip);
                if (rnd.nextInt(10) == 0) store.last("0", ip.toString());
            }
        }
        Allocator alloc = new Allocator(s, store, 0);
        Set<IpAddr> got = new HashSet<>();
        for (int i = 0; i < expected.size(); i++) {
            Allocation a = alloc.get("c" + i, "eth0", null);
            assertTrue(got.add(a.address()), "handed out twice: " + a);
            Range r = s.rangeFor(a.address());
            assertEquals(r.gateway(), a.gateway());
            assertEquals(r.subnet().prefix(), a.prefix());
            assertNotEquals(r.gateway(), a.address());
        }
        assertEquals(expected, got);
        assertEquals("no IP addresses available in range set: " + s,
                assertThrows(CniException.class, () -> alloc.get("last", "eth0", null)).msg());
    }
}
