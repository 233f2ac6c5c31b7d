package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.IpAddr;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Concurrent listings of one range set made once, without etcd. */
class SharedListingTest {
    static final Set<IpAddr> TAKEN = Set.of(IpAddr.parse("10.70.0.2"), IpAddr.parse("10.70.0.3"));

    /** Callers arriving while the first one's listing is in flight take its result: one listing for all. */
    @Test
    void callersDuringAListingShareIt() throws Exception {
        String key = "shared " + System.nanoTime();
        AtomicInteger listings = new AtomicInteger();
        CountDownLatch listing = new CountDownLatch(1), release = new CountDownLatch(1);
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Set<IpAddr>> first = ex.submit(() -> SharedListing.taken(key, () -> {
                listings.incrementAndGet();
                listing.countDown();
                hold(release);
                return TAKEN;
            }));
            assertTrue(listing.await(10, TimeUnit.SECONDS));
            List<Future<Set<IpAddr>>> joiners = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                joiners.add(ex.submit(() -> SharedListing.taken(key, () -> {
                    listings.incrementAndGet();
                    return Set.of();
                })));
            }
            for (int i = 0; i < 1000 && SharedListing.waiting(key) < 8; i++) Thread.sleep(10);
            assertEquals(8, SharedListing.waiting(key), "the joiners wait for the listing in flight");
            release.countDown();
            assertEquals(TAKEN, first.get(10, TimeUnit.SECONDS));
            for (Future<Set<IpAddr>> j : joiners) assertEquals(TAKEN, j.get(10, TimeUnit.SECONDS));
        }
        assertEquals(1, listings.get(), "joiners that arrived during the listing did not list again");
    }

    /** Inside a lister, which may throw only IOException. */
    static void hold(CountDownLatch release) throws IOException {
        try {
            assertTrue(release.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new java.io.InterruptedIOException("interrupted");
        }
    }

    /** A listing that failed is the failure of every caller that waited for it; the next caller lists anew. */
    @Test
    void aFailureIsEveryWaitersAndNotRemembered() throws Exception {
        String key = "failing " + System.nanoTime();
        CountDownLatch listing = new CountDownLatch(1), release = new CountDownLatch(1);
        try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Set<IpAddr>> first = ex.submit(() -> SharedListing.taken(key, () -> {
                listing.countDown();
                hold(release);
                throw new IOException("etcd http://192.0.2.1:2379: unreachable");
            }));
            assertTrue(listing.await(10, TimeUnit.SECONDS));
            Future<Set<IpAddr>> joiner = ex.submit(() -> SharedListing.taken(key, () -> Set.of()));
            for (int i = 0; i < 1000 && SharedListing.waiting(key) < 1; i++) Thread.sleep(10);
            assertEquals(1, SharedListing.waiting(key));
            release.countDown();
            ExecutionException e = assertThrows(ExecutionException.class, () -> first.get(10, TimeUnit.SECONDS));
            assertEquals("etcd http://192.0.2.1:2379: unreachable", e.getCause().getMessage());
            ExecutionException shared = assertThrows(ExecutionException.class, () -> joiner.get(10, TimeUnit.SECONDS));
            assertEquals("etcd http://192.0.2.1:2379: unreachable", shared.getCause().getMessage(), "the same message");
        }
        assertEquals(TAKEN, SharedListing.taken(key, () -> TAKEN), "after a failure, the next call lists again");
    }

    /** Listings one after another each read etcd: nothing is kept once a listing is done; the result cannot be changed. */
    @Test
    void sequentialListingsAreNotCached() throws Exception {
        String key = "sequential " + System.nanoTime();
        Set<IpAddr> one = SharedListing.taken(key, () -> TAKEN);
        Set<IpAddr> two = SharedListing.taken(key, Set::of);
        assertEquals(TAKEN, one);
        assertEquals(Set.of(), two);
        assertThrows(UnsupportedOperationException.class, () -> one.add(IpAddr.parse("10.70.0.9")));
        assertEquals(0, SharedListing.waiting(key));
    }
}
