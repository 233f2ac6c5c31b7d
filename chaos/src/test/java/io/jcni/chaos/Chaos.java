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

    /**
     * When a long run of suite {@code name} takes no new case: {@code -Djcni.chaos.stopAt.NAME=}
     * an ISO instant (2026-11-25T22:30:00Z), for a full-size run on a machine too busy to finish it
     * in time; the suite then reports how far it got and checks everything it ran. Null: no limit.
     */
    static java.time.Instant stopAt(String name) {
        String at = System.getProperty("jcni.chaos.stopAt." + name);
        return at == null || at.isBlank() ? null : java.time.Instant.parse(at);
    }

    static String seconds(long startNanos) {
        return String.format("%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }
}
