package io.jcni.overlay;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Delays between retries of one kind of etcd work: 1 s after the first failure, doubling up to a
 * cap, each with up to half again of random jitter (so hosts that lost etcd together do not all
 * come back in the same instant, and a long outage is not met by every host knocking every
 * second); back to 1 s after a success. Pure but for the random source; one per thread.
 */
final class Backoff {
    static final Duration FIRST = Duration.ofSeconds(1);
    static final Duration MAX = Duration.ofSeconds(30);

    private final long firstMillis;
    private final long capMillis;
    private final RandomGenerator random;
    private int failures;

    Backoff(Duration first, Duration cap, RandomGenerator random) {
        this.firstMillis = first.toMillis();
        this.capMillis = Math.max(firstMillis, cap.toMillis());
        this.random = random;
    }

    /**
     * The cap for work whose delay must stay within {@code bound} (the lease TTL, or a third of
     * it for keep-alives, so that waiting alone never lets our lease expire): at most 30 s, at
     * least 1 s.
     */
    static Duration capWithin(Duration bound) {
        return bound.compareTo(MAX) > 0 ? MAX : bound.compareTo(FIRST) < 0 ? FIRST : bound;
    }

    /** The delay before the next attempt, counting one more failure. */
    long nextMillis() {
        long base = firstMillis;
        for (int i = 0; i < failures && base < capMillis; i++) base *= 2;
        base = Math.min(base, capMillis);
        failures++;
        return base + random.nextLong(base / 2 + 1);
    }

    /** After a success: the next failure waits the first delay again. */
    void reset() {
        failures = 0;
    }
}
