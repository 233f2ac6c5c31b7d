package io.jcni.daemon;

import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Closes what a slow or idle client holds (its channel) when its deadline passes, which wakes any
 * thread blocked reading or writing it. One timer thread for a whole server; reusable by any socket
 * jcnid serves, with {@link ByteBudget}.
 */
public final class Deadlines implements AutoCloseable {
    private final ScheduledThreadPoolExecutor timer;

    public Deadlines(String threadName) {
        timer = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().name(threadName).daemon().factory());
        // Most deadlines are disarmed long before they pass: drop them then, not when they would have fired.
        timer.setRemoveOnCancelPolicy(true);
    }

    /** An armed deadline; closing it disarms it. */
    public static final class Armed implements AutoCloseable {
        private final AtomicBoolean fired = new AtomicBoolean();
        private ScheduledFuture<?> task;

        /** Whether the deadline passed and the resource was closed. */
        public boolean fired() {
            return fired.get();
        }

        @Override
        public void close() {
            if (task != null) task.cancel(false);
        }
    }

    /** Closes {@code c} after {@code d} unless the returned deadline is closed first. */
    public Armed arm(Closeable c, Duration d) {
        Armed a = new Armed();
        a.task = timer.schedule(() -> {
            a.fired.set(true);
            try {
                c.close();
            } catch (IOException ignored) {
                // closing is all we wanted
            }
        }, d.toNanos(), TimeUnit.NANOSECONDS);
        return a;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
