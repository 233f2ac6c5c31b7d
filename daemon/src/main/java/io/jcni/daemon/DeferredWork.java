package io.jcni.daemon;

import io.jcni.plugins.skel.Background;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * jcnid's {@link Background}: work requests leave behind after their answer (today: deleting
 * retired veths, whose RCU wait is the kernel's, not the caller's). A few platform threads (the
 * work blocks in netlink calls), an unbounded queue (a task is a few objects; the namespaces it
 * holds are freed as it runs), and a drain at shutdown so a stopped daemon leaves nothing half done.
 *
 * <p>Several threads, because concurrent deletions share the kernel's grace periods: 50 veths take
 * ~1 s one after the other and ~0.14 s at once (bench/link-delete).
 */
final class DeferredWork implements Background {
    static final int THREADS = 4;

    private final ThreadPoolExecutor pool;
    private final PrintStream log;
    final AtomicInteger pending = new AtomicInteger();
    final AtomicLong done = new AtomicLong();
    final AtomicLong failed = new AtomicLong();

    DeferredWork(PrintStream log) {
        this.log = log;
        this.pool = new ThreadPoolExecutor(THREADS, THREADS, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                Thread.ofPlatform().name("jcnid-deferred-", 0).daemon().factory());
        pool.allowCoreThreadTimeOut(true);
    }

    @Override
    public boolean submit(String what, Runnable task) {
        pending.incrementAndGet();
        try {
            pool.execute(() -> {
                try {
                    task.run();
                    done.incrementAndGet();
                } catch (RuntimeException | Error e) {
                    failed.incrementAndGet();
                    log.println(Instant.now() + " jcnid deferred_error=" + JcnidServer.quote(what + ": " + e));
                } finally {
                    pending.decrementAndGet();
                }
            });
            return true;
        } catch (RejectedExecutionException e) {
            pending.decrementAndGet();
            return false;
        }
    }

    /** Takes no more work and waits up to {@code timeout} for what is queued; true when all of it ran. */
    boolean drain(Duration timeout) {
        pool.shutdown();
        try {
            return pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
