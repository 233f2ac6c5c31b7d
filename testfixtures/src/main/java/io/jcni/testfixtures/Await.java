package io.jcni.testfixtures;

import java.time.Duration;

/** Bounded waiting for a condition: every wait of the tests has a deadline and says what it waited for. */
public final class Await {
    private Await() {}

    /** A condition that may throw (a command, a file read). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    /** Polls {@code cond} every 100 ms until it holds; fails naming {@code what} after {@code max}. */
    public static void until(String what, Duration max, Condition cond) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        while (!cond.holds()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out after " + max.toSeconds() + " s waiting for " + what);
            pause(100);
        }
    }

    /** Sleeps {@code millis}; an interrupt fails the test (and stays set). */
    public static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
