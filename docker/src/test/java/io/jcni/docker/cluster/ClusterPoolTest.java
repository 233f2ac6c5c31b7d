package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.ipam.Pool;
import io.jcni.docker.store.MemorySharedStore;
import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The shared pool's compare-and-swap: hosts taking addresses at once never get the same one. */
class ClusterPoolTest {

    static ClusterNetwork def(String name) {
        return new ClusterNetwork(name, 4242, new ClusterNetwork.Subnet(Cidr.parse("10.77.0.0/16"), Cidr.parse("10.77.3.0/24"), IpAddr.parse("10.77.0.1")), null, false);
    }

    /** {@link #def} with an IPv6 subnet fd77::/64, its range fd77::100/120 and gateway fd77::1. */
    static ClusterNetwork dualStack(String name) {
        return new ClusterNetwork(name, 4242, def(name).v4(), new ClusterNetwork.Subnet(Cidr.parse("fd77::/64"), Cidr.parse("fd77::100/120"),
                IpAddr.parse("fd77::1")), false);
    }

    static MemorySharedStore withDualPools(String name) {
        MemorySharedStore s = new MemorySharedStore();
        for (boolean v6 : new boolean[] {false, true}) s.put(ClusterKeys.cluster(name), ClusterKeys.pool(v6), ClusterPool.initial(dualStack(name), v6).toJson());
        return s;
    }

    /** Runs {@code takes} for hosts h0, h1, ... on a thread each, started together; every address they took. */
    static List<IpAddr> atOnce(int hosts, Function<String, List<IpAddr>> takes) throws InterruptedException {
        ConcurrentLinkedQueue<IpAddr> got = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            String host = "h" + h;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                got.addAll(takes.apply(host));
            }));
        }
        go.countDown();
        for (Thread t : threads) t.join();
        return List.copyOf(got);
    }

    static MemorySharedStore withPool(String name) {
        MemorySharedStore s = new MemorySharedStore();
        s.put(ClusterKeys.cluster(name), ClusterKeys.POOL, ClusterPool.initial(def(name), false).toJson());
        return s;
    }

    @Test
    void concurrentTakesFromSeveralHostsGiveNoDuplicate() throws Exception {
        MemorySharedStore store = withPool("c1");
        int hosts = 6, each = 30;
        List<IpAddr> got = atOnce(hosts, host -> {
            List<IpAddr> mine = new ArrayList<>();
            for (int i = 0; i < each; i++) mine.add(ClusterPool.take(store, "c1", false, null, host));
            return mine;
        });
        Set<IpAddr> distinct = new HashSet<>(got);
        assertEquals(hosts * each, got.size());
        assertEquals(hosts * each, distinct.size(), "duplicate addresses");
        for (IpAddr a : distinct) assertTrue(Cidr.parse("10.77.3.0/24").contains(a), a + " outside the range");
        assertTrue(!distinct.contains(IpAddr.parse("10.77.0.1")), "the gateway was handed out");
        Pool p = Pool.fromJson(StateDoc.of("t", store.get(ClusterKeys.cluster("c1"), ClusterKeys.POOL).orElseThrow()));
        assertEquals(hosts * each + 1, p.allocated().size()); // and the gateway
    }

    @Test
    void aWantedAddressIsTakenOnceAndGivenBack() {
        MemorySharedStore store = withPool("c2");
        assertEquals(IpAddr.parse("10.77.9.9"), ClusterPool.take(store, "c2", false, IpAddr.parse("10.77.9.9"), "h1"));
        DriverException e = assertThrows(DriverException.class, () -> ClusterPool.take(store, "c2", false, IpAddr.parse("10.77.9.9"), "h1"));
        assertTrue(e.getMessage().contains("already in use") && e.getMessage().contains("cluster network c2"), e.getMessage());
        ClusterPool.give(store, "c2", IpAddr.parse("10.77.9.9"));
        ClusterPool.give(store, "c2", IpAddr.parse("10.77.9.9")); // again: no error
        assertEquals(IpAddr.parse("10.77.9.9"), ClusterPool.take(store, "c2", false, IpAddr.parse("10.77.9.9"), "h1"));
        assertEquals(IpAddr.parse("10.77.3.1"), ClusterPool.take(store, "c2", false, null, "h1")); // the range's .0 is skipped
    }

    static ClusterPool.Shared shared(MemorySharedStore store, String name) {
        return ClusterPool.Shared.of(StateDoc.of("t", store.get(ClusterKeys.cluster(name), ClusterKeys.POOL).orElseThrow()));
    }

    @Test
    void eachAddressNamesTheHostThatTookItAndGoesWithItsRelease() {
        MemorySharedStore store = withPool("c3");
        IpAddr a1 = ClusterPool.take(store, "c3", false, null, "10.0.0.1"), b1 = ClusterPool.take(store, "c3", false, null, "10.0.0.2");
        IpAddr a2 = ClusterPool.take(store, "c3", false, null, "10.0.0.1");
        assertEquals(Map.of(a1, "10.0.0.1", b1, "10.0.0.2", a2, "10.0.0.1"), shared(store, "c3").owners());
        ClusterPool.give(store, "c3", a2);
        assertEquals(Map.of(a1, "10.0.0.1", b1, "10.0.0.2"), shared(store, "c3").owners());
        // A dead host's addresses go, the gateway (no owner) and the living host's stay.
        assertEquals(List.of(a1), ClusterPool.releaseOwners(store, "c3", Set.of("10.0.0.1"), () -> Set.of("10.0.0.2")));
        ClusterPool.Shared s = shared(store, "c3");
        assertEquals(Set.of(IpAddr.parse("10.77.0.1"), b1), s.pool().allocated());
        assertEquals(Map.of(b1, "10.0.0.2"), s.owners());
        // The next container gets the released address.
        assertEquals(a1, ClusterPool.take(store, "c3", false, null, "10.0.0.2"));
    }

    @Test
    void aHostThatCameBackBeforeTheWriteKeepsItsAddresses() {
        MemorySharedStore store = withPool("c4");
        IpAddr a1 = ClusterPool.take(store, "c4", false, null, "10.0.0.1");
        // judged dead, but its host key is there again when the release is written
        assertEquals(List.of(), ClusterPool.releaseOwners(store, "c4", Set.of("10.0.0.1"), () -> Set.of("10.0.0.1")));
        assertTrue(shared(store, "c4").pool().allocated().contains(a1));
    }

    @Test
    void aRestartedDriverReclaimsItsAddressesAndReportsTheOnesTakenMeanwhile() {
        MemorySharedStore store = withPool("c5");
        IpAddr a1 = ClusterPool.take(store, "c5", false, null, "10.0.0.1"), a2 = ClusterPool.take(store, "c5", false, null, "10.0.0.1");
        ClusterPool.releaseOwners(store, "c5", Set.of("10.0.0.1"), Set::of);
        assertEquals(a1, ClusterPool.take(store, "c5", false, null, "10.0.0.2")); // another host took one of them meanwhile
        assertEquals(List.of(a1), ClusterPool.reclaim(store, "c5", "10.0.0.1", List.of(a1, a2)));
        assertEquals(Map.of(a1, "10.0.0.2", a2, "10.0.0.1"), shared(store, "c5").owners());
        // Reclaiming what it still holds changes nothing but the version (so a release judged before fails its swap).
        long before = store.read(ClusterKeys.cluster("c5"), ClusterKeys.POOL).orElseThrow().version();
        assertEquals(List.of(), ClusterPool.reclaim(store, "c5", "10.0.0.1", List.of(a2)));
        assertTrue(store.read(ClusterKeys.cluster("c5"), ClusterKeys.POOL).orElseThrow().version() > before);
        assertEquals(Map.of(a1, "10.0.0.2", a2, "10.0.0.1"), shared(store, "c5").owners());
    }

    @Test
    void aPoolWrittenBeforeOwnersWereRecordedIsReadAndNeverReleased() {
        MemorySharedStore store = withPool("c6"); // initial(): no "owners" field, as documents written before
        store.put(ClusterKeys.cluster("c6"), ClusterKeys.POOL, ClusterPool.initial(def("c6"), false).take(IpAddr.parse("10.77.3.7")).toJson());
        assertEquals(Map.of(), shared(store, "c6").owners());
        assertEquals(List.of(), ClusterPool.releaseOwners(store, "c6", Set.of("10.0.0.1"), Set::of));
        assertTrue(shared(store, "c6").pool().allocated().contains(IpAddr.parse("10.77.3.7")));
    }

    @Test
    void aPoolGoneFromTheStoreIsAClearError() {
        MemorySharedStore store = new MemorySharedStore();
        DriverException e = assertThrows(DriverException.class, () -> ClusterPool.take(store, "gone", false, null, "h1"));
        assertTrue(e.getMessage().contains("cluster network gone has no pool"), e.getMessage());
        ClusterPool.give(store, "gone", IpAddr.parse("10.77.3.1")); // no error
    }

    @Test
    void concurrentDualStackTakesGiveNoDuplicateInEitherFamily() throws Exception {
        MemorySharedStore store = withDualPools("d1");
        int hosts = 4, each = 20;
        List<IpAddr> got = atOnce(hosts, host -> {
            List<IpAddr> mine = new ArrayList<>();
            // as libnetwork asks for a container's addresses: IPv4, then IPv6
            for (int i = 0; i < each; i++) {
                mine.add(ClusterPool.take(store, "d1", false, null, host));
                mine.add(ClusterPool.take(store, "d1", true, null, host));
            }
            return mine;
        });
        List<IpAddr> v6 = got.stream().filter(IpAddr::isV6).toList();
        assertEquals(hosts * each, v6.size());
        assertEquals(hosts * each, new HashSet<>(v6).size(), "duplicate IPv6 addresses");
        assertEquals(2 * hosts * each, new HashSet<>(got).size(), "duplicate addresses");
        for (IpAddr a : v6) assertTrue(Cidr.parse("fd77::100/120").contains(a), a + " outside the IPv6 range");
        assertTrue(!v6.contains(IpAddr.parse("fd77::1")), "the IPv6 gateway was handed out");
        ClusterPool.Shared s6 = ClusterPool.read(store, "d1", true).orElseThrow();
        assertEquals(hosts * each + 1, s6.pool().allocated().size()); // and the gateway
        assertEquals(hosts * each, s6.owners().size());
    }

    @Test
    void aDeadHostsAddressesGoFromBothPoolsAndComeBackWithItsReclaim() {
        MemorySharedStore store = withDualPools("d2");
        IpAddr a4 = ClusterPool.take(store, "d2", false, null, "10.0.0.1"), a6 = ClusterPool.take(store, "d2", true, null, "10.0.0.1");
        IpAddr b6 = ClusterPool.take(store, "d2", true, IpAddr.parse("fd77::1:5"), "10.0.0.2"); // a fixed --ip6 outside the range, inside the subnet
        assertEquals(IpAddr.parse("fd77::100"), a6); // the range's first address: IPv6 skips only the subnet's own (anycast) address
        assertEquals(Set.of("10.0.0.1", "10.0.0.2"), ClusterPool.ownerHosts(store, "d2"));
        assertEquals(List.of(a4, a6), ClusterPool.releaseOwners(store, "d2", Set.of("10.0.0.1"), () -> Set.of("10.0.0.2")));
        assertEquals(Set.of(IpAddr.parse("fd77::1"), b6), ClusterPool.read(store, "d2", true).orElseThrow().pool().allocated());
        assertEquals(Set.of("10.0.0.2"), ClusterPool.ownerHosts(store, "d2"));
        // Back before anyone took them: both families' addresses are its own again.
        assertEquals(List.of(), ClusterPool.reclaim(store, "d2", "10.0.0.1", List.of(a4, a6)));
        assertEquals("10.0.0.1", ClusterPool.read(store, "d2", true).orElseThrow().owners().get(a6));
        assertEquals("10.0.0.1", shared(store, "d2").owners().get(a4));
        // Given back one by one, each to its family's pool; twice is no error.
        ClusterPool.give(store, "d2", a6);
        ClusterPool.give(store, "d2", a6);
        assertFalse(ClusterPool.read(store, "d2", true).orElseThrow().pool().allocated().contains(a6));
        assertTrue(shared(store, "d2").pool().allocated().contains(a4));
    }

    @Test
    void anIPv4OnlyClusterHasNoIPv6PoolToTakeFrom() {
        MemorySharedStore store = withPool("d3");
        DriverException e = assertThrows(DriverException.class, () -> ClusterPool.take(store, "d3", true, null, "h1"));
        assertTrue(e.getMessage().contains("cluster network d3 has no IPv6 pool"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ClusterPool.initial(def("d3"), true));
        IpAddr a = ClusterPool.take(store, "d3", false, null, "h1");
        assertEquals(List.of(a), ClusterPool.releaseOwners(store, "d3", Set.of("h1"), Set::of)); // no IPv6 pool: only IPv4 looked at
        assertEquals(List.of(), ClusterPool.reclaim(store, "d3", "h1", List.of(a)));
    }
}
