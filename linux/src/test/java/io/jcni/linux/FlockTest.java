package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** flock(2) needs no privileges; it interoperates with util-linux flock(1) as with Go's syscall.Flock. */
class FlockTest {

    @Test
    void exclusiveAgainstOtherDescriptorsAndProcesses(@TempDir Path dir) {
        Path file = dir.resolve("lock");
        try (Flock held = Flock.lock(file)) {
            assertEquals(file, held.path());
            assertTrue(Files.exists(file));
            assertEquals(Optional.empty(), Flock.tryLock(file));
            assertEquals(1, Scratch.exitCode(List.of("flock", "-n", file.toString(), "true")));
        }
        assertEquals(0, Scratch.exitCode(List.of("flock", "-n", file.toString(), "true")));
        Optional<Flock> again = Flock.tryLock(file);
        assertTrue(again.isPresent());
        again.get().close();
    }

    @Test
    void directoriesCanBeLocked(@TempDir Path dir) {
        try (Flock held = Flock.lock(dir)) {
            assertEquals(dir, held.path());
            assertEquals(1, Scratch.exitCode(List.of("flock", "-n", dir.toString(), "true")));
        }
    }

    /** sbr locks the container's netns file, which cannot be opened for writing. */
    @Test
    @org.junit.jupiter.api.Tag("root")
    void aNetnsFileCanBeLocked() {
        try (Scratch s = Scratch.create()) {
            Path ns = Netns.pathOf(s.name);
            try (Flock held = Flock.lock(ns)) {
                assertEquals(Optional.empty(), Flock.tryLock(ns));
                assertEquals(1, Scratch.exitCode(List.of("flock", "-n", ns.toString(), "true")));
            }
            Optional<Flock> again = Flock.tryLock(ns);
            assertTrue(again.isPresent());
            again.get().close();
        }
    }

    /**
     * A jcnid deadlock found by the red team: a virtual thread holds the lock and parks (as it does waiting
     * for its nft child) while more virtual threads than there are carriers wait for the lock. If a
     * waiter pinned its carrier inside flock(2), the holder could never be mounted again to release.
     */
    @Test
    void virtualThreadsWaitingForTheLockLeaveTheCarriersFree(@TempDir Path dir) {
        Path file = dir.resolve("lock");
        int waiters = 4 * Runtime.getRuntime().availableProcessors() + 4;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            CountDownLatch holderHasIt = new CountDownLatch(1);
            CountDownLatch waitersStarted = new CountDownLatch(waiters);
            List<Thread> threads = new ArrayList<>();
            threads.add(Thread.ofVirtual().start(() -> {
                try (Flock held = Flock.lock(file)) {
                    holderHasIt.countDown();
                    waitersStarted.await();
                    Thread.sleep(200); // parked: needs a carrier to continue
                    done.incrementAndGet();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            holderHasIt.await();
            for (int i = 0; i < waiters; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    waitersStarted.countDown();
                    try (Flock held = Flock.lock(file)) {
                        maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        Thread.sleep(1);
                        inside.decrementAndGet();
                        done.incrementAndGet();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }));
            }
            for (Thread t : threads) t.join();
        });
        assertEquals(waiters + 1, done.get());
        assertEquals(1, maxInside.get(), "the lock stayed exclusive");
    }

    /** A FIFO would block open(2) until a writer comes: refused at once instead. */
    @Test
    void aFifoOrADeviceIsRefusedWithoutBlocking(@TempDir Path dir) {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, Scratch.exitCode(List.of("mkfifo", fifo.toString())));
        assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
            ErrnoException e = assertThrows(ErrnoException.class, () -> Flock.lock(fifo));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("not a regular file or directory"), e.getMessage());
            assertEquals(Errno.EINVAL, assertThrows(ErrnoException.class, () -> Flock.tryLock(Path.of("/dev/zero"))).errno());
        });
    }
}
