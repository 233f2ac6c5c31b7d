package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DeferredWorkTest {
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private final DeferredWork work = new DeferredWork(new PrintStream(log, true));

    @Test
    void requestsWithTheSameKeyShareOneWaitingTask() {
        AtomicInteger made = new AtomicInteger(), ran = new AtomicInteger();
        for (int i = 0; i < 50; i++) {
            assertTrue(work.schedule("k", 60_000, () -> {
                made.incrementAndGet();
                return ran::incrementAndGet;
            }));
        }
        assertTrue(work.schedule("other", 60_000, () -> ran::incrementAndGet));
        assertEquals(1, made.get(), "the task is made once");
        assertEquals(2, work.pending.get());
        assertEquals(49, work.shared.get());
        // shutdown runs what waits at once, without its delay
        assertTrue(work.drain(Duration.ofSeconds(10)));
        assertEquals(2, ran.get());
        assertEquals(0, work.pending.get());
        assertEquals(2, work.done.get());
    }

    @Test
    void aKeyIsFreeAgainOnceItsTaskStarted() throws Exception {
        CountDownLatch started = new CountDownLatch(1), release = new CountDownLatch(1);
        AtomicInteger made = new AtomicInteger();
        work.schedule("k", 0, () -> {
            made.incrementAndGet();
            return () -> {
                started.countDown();
                await(release);
            };
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        // work retired while the first deletion runs needs a deletion of its own
        work.schedule("k", 60_000, () -> {
            made.incrementAndGet();
            return () -> {};
        });
        assertEquals(2, made.get());
        release.countDown();
        assertTrue(work.drain(Duration.ofSeconds(10)));
    }

    @Test
    void failuresAreCountedAndLoggedAndAfterShutdownTheCallerDoesTheWork() {
        work.schedule("bad", 0, () -> () -> {
            throw new IllegalStateException("boom");
        });
        assertTrue(work.drain(Duration.ofSeconds(10)));
        assertEquals(1, work.failed.get());
        assertTrue(log.toString().contains("deferred_error=\"bad: java.lang.IllegalStateException: boom\""), log.toString());
        assertFalse(work.schedule("late", 0, () -> () -> {}));
    }

    private static void await(CountDownLatch l) {
        try {
            l.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
