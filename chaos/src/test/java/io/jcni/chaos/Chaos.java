package io.jcni.chaos;

/** Sizes of the chaos and fuzz suites: bounded for CI, the full sizes with -Djcni.chaos.full=true. */
final class Chaos {
    private Chaos() {}

    static final boolean FULL = Boolean.getBoolean("jcni.chaos.full");
    /** Every random choice derives from this, so a failure reproduces: -Djcni.chaos.seed=N. */
    static final long SEED = Long.getLong("jcni.chaos.seed", 14L);

    /** A size: {@code -Djcni.chaos.NAME=N} wins, else the full or the CI default. */
    static int size(String name, int ci, int full) {
        return Integer.getInteger("jcni.chaos." + name, FULL ? full : ci);
    }

    static String seconds(long startNanos) {
        return String.format("%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }
}
