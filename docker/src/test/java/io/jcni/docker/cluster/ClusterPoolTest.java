package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.ipam.Pool;
import io.jcni.docker.store.MemorySharedStore;
import io.jcni.docker.store.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The shared pool's compare-and-swap: hosts taking addresses at once never get the same one. */
class ClusterPoolTest {

    static ClusterNetwork def(String name) {
        return new ClusterNetwork(name, 4242, Cidr.parse("10.77.0.0/16"), Cidr.parse("10.77.3.0/24"), IpAddr.parse("10.77.0.1"), false);
    }

    static MemorySharedStore withPool(String name) {
        MemorySharedStore s = new MemorySharedStore();
        s.put(ClusterKeys.cluster(name), ClusterKeys.POOL, ClusterPool.initial(def(name)).toJson());
        return s;
    }

    @Test
    void concurrentTakesFromSeveralHostsGiveNoDuplicate() throws Exception {
        MemorySharedStore store = withPool("c1");
        int hosts = 6, each = 30;
        ConcurrentLinkedQueue<IpAddr> got = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) got.add(ClusterPool.take(store, "c1", null));
            }));
        }
        go.countDown();
        for (Thread t : threads) t.join();
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
        assertEquals(IpAddr.parse("10.77.9.9"), ClusterPool.take(store, "c2", IpAddr.parse("10.77.9.9")));
        DriverException e = assertThrows(DriverException.class, () -> ClusterPool.take(store, "c2", IpAddr.parse("10.77.9.9")));
        assertTrue(e.getMessage().contains("already in use") && e.getMessage().contains("cluster network c2"), e.getMessage());
        ClusterPool.give(store, "c2", IpAddr.parse("10.77.9.9"));
        ClusterPool.give(store, "c2", IpAddr.parse("10.77.9.9")); // again: no error
        assertEquals(IpAddr.parse("10.77.9.9"), ClusterPool.take(store, "c2", IpAddr.parse("10.77.9.9")));
        assertEquals(IpAddr.parse("10.77.3.1"), ClusterPool.take(store, "c2", null)); // the range's .0 is skipped
    }

    @Test
    void aPoolGoneFromTheStoreIsAClearError() {
        MemorySharedStore store = new MemorySharedStore();
        DriverException e = assertThrows(DriverException.class, () -> ClusterPool.take(store, "gone", null));
        assertTrue(e.getMessage().contains("cluster network gone has no pool"), e.getMessage());
        ClusterPool.give(store, "gone", IpAddr.parse("10.77.3.1")); // no error
    }
}
