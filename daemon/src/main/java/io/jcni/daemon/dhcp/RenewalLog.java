package io.jcni.daemon.dhcp;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Rate limit for a lease's renewal lines: a line that says the same as the lease's previous one
 * ("renewed", "renew_failed"...) is written at most once per {@link #INTERVAL_MILLIS}; the next
 * line written counts those left out. A server that has a lease renewed every few seconds fills
 * no disk, and a change (a renewal failing, or succeeding again) is always written at once.
 */
final class RenewalLog {
    static final long INTERVAL_MILLIS = 60_000;

    private record Last(String kind, long at, int notLogged) {}

    private final LongSupplier clock;
    private final Map<String, Last> last = new ConcurrentHashMap<>();

    RenewalLog(LongSupplier clock) {
        this.clock = clock;
    }

    /** The line to write ({@code kind + detail}, with the count of lines left out), or null to write none. */
    String line(String clientId, String kind, String detail) {
        long now = clock.getAsLong();
        Last before = last.get(clientId);
        if (before != null && before.kind().equals(kind) && now - before.at() < INTERVAL_MILLIS) {
            last.put(clientId, new Last(kind, before.at(), before.notLogged() + 1));
            return null;
        }
        last.put(clientId, new Last(kind, now, 0));
        return kind + detail + (before == null || before.notLogged() == 0 ? "" : " not_logged=" + before.notLogged());
    }

    void forget(String clientId) {
        last.remove(clientId);
    }
}
