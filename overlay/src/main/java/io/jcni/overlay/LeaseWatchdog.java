package io.jcni.overlay;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent watchdog's decisions, apart from its threads (so they are tested without etcd).
 *
 * <p>Why it exists: {@code java.net.http}'s request timeout ends when the response headers
 * arrive; an etcd (or a proxy) that sends headers and then nothing parks the caller forever, and
 * an Error thrown inside the HTTP client can end a thread. So the lease work (each keep-alive and
 * each leasing call) is timed here, and the watch's traffic too: etcd answers a watch with progress
 * notifications when nothing changes, so a watch silent for longer than the deadline is dead.
 */
final class LeaseWatchdog {
    enum LeaseState {
        /** Idle, or within its deadline. */
        OK,
        /** One etcd call has run past its deadline: replace the client, lease again. */
        STUCK,
        /** The keep-alive thread is gone: start another, lease again. */
        DEAD
    }

    /** When a piece of work started (or last showed life); 0 when idle. Written by the worker, read by the watchdog. */
    static final class Clock {
        private final AtomicLong since = new AtomicLong();

        /** Marks the work busy from {@code nowNanos}; returns the token {@link #idle(long)} takes. */
        long busy(long nowNanos) {
            long t = nowNanos == 0 ? 1 : nowNanos;
            since.set(t);
            return t;
        }

        /** Marks the work idle, unless someone else marked it busy since {@code token} (an abandoned call returning late). */
        void idle(long token) {
            since.compareAndSet(token, 0);
        }

        void idle() {
            since.set(0);
        }

        long busyMillis(long nowNanos) {
            long s = since.get();
            return s == 0 ? 0 : (nowNanos - s) / 1_000_000;
        }
    }

    private final long callDeadlineMillis;
    private final long watchDeadlineMillis;

    LeaseWatchdog(Duration callDeadline, Duration watchDeadline) {
        this.callDeadlineMillis = callDeadline.toMillis();
        this.watchDeadlineMillis = watchDeadline.toMillis();
    }

    LeaseState leaseVerdict(Clock leaseWork, boolean keepAliveAlive, long nowNanos) {
        if (!keepAliveAlive) return LeaseState.DEAD;
        return leaseWork.busyMillis(nowNanos) > callDeadlineMillis ? LeaseState.STUCK : LeaseState.OK;
    }

    boolean watchStalled(Clock watchTraffic, long nowNanos) {
        return watchTraffic.busyMillis(nowNanos) > watchDeadlineMillis;
    }
}
