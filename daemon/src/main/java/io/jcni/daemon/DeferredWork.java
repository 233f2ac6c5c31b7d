package io.jcni.daemon;

import io.jcni.plugins.skel.Background;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * jcnid's {@link Background}: work requests leave behind after their answer (today: deleting
 * retired links, whose RCU wait is the kernel's, not the caller's), run a moment later and shared
 * by key, so that the DELs of many pods end in one deletion. Platform threads (the work blocks in
 * netlink calls); at shutdown what is waiting runs at once and is waited for, within the drain time.
 */
final class DeferredWork implements Background {
    static final int THREADS = 2;

    private final ScheduledThreadPoolExecutor pool;
    private final PrintStream log;
    /** Keys of tasks scheduled and not started: a later request with the same key shares the task. */
    private final Set<String> waiting = ConcurrentHashMap.newKeySet();
    final AtomicInteger pending = new AtomicInteger();
    final AtomicLong done = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong shared = new AtomicLong();

    DeferredWork(PrintStream log) {
        this.log = log;
        this.pool = new ScheduledThreadPoolExecutor(THREADS, Thread.ofPlatform().name("jcnid-deferred-", 0).daemon().factory());
        pool.setKeepAliveTime(10, TimeUnit.SECONDS);
        pool.allowCoreThreadTimeOut(true);
    }

    @Override
    @SuppressWarnings("FutureReturnValueIgnored") // the task catches, counts and logs its own failures: its Future holds nothing
    public boolean schedule(String key, long delayMillis, Supplier<Runnable> task) {
        if (pool.isShutdown()) return false;
        if (!waiting.add(key)) {
            shared.incrementAndGet();
            return true;
        }
        Runnable r;
        try {
            r = task.get();
        } catch (RuntimeException | Error e) {
            waiting.remove(key);
            throw e;
        }
        pending.incrementAndGet();
        try {
            pool.schedule(() -> {
                waiting.remove(key); // from now on, new work needs a task of its own
                try {
                    r.run();
                    done.incrementAndGet();
                } catch (RuntimeException | Error e) {
                    failed.incrementAndGet();
                    log.println(Instant.now() + " jcnid deferred_error=" + DaemonLog.quote(key + ": " + e));
                } finally {
                    pending.decrementAndGet();
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            pending.decrementAndGet();
            waiting.remove(key);
            r.run(); // shut down meanwhile: the task is ours to run (and to release what it holds)
            return true;
        }
    }

    /** Takes no more work, runs what is waiting now, and waits up to {@code timeout}; true when all of it ran. */
    boolean drain(Duration timeout) {
        // Delayed tasks would otherwise wait out their delay: run them now.
        for (Runnable r : pool.getQueue()) {
            if (pool.remove(r)) pool.execute(r);
        }
        pool.shutdown();
        try {
            return pool.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
