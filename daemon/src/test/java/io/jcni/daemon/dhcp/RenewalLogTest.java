package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class RenewalLogTest {
    long now = 0;
    final RenewalLog log = new RenewalLog(() -> now);

    @Test
    void theSameLineAtMostOnceAMinuteAndAChangeAtOnce() {
        assertEquals("renewed a=1", log.line("c", "renewed", " a=1"));
        for (int i = 0; i < 29; i++) { // every 2 s for 58 s
            now += 2_000;
            assertNull(log.line("c", "renewed", " a=1"));
        }
        assertEquals("renew_failed x not_logged=29", log.line("c", "renew_failed", " x"), "a change is written at once, counting what was left out");
        assertEquals("renewed a=1", log.line("c", "renewed", " a=1"));
        now += 10_000;
        assertNull(log.line("c", "renewed", " a=1"));
        now += RenewalLog.INTERVAL_MILLIS;
        assertEquals("renewed a=1 not_logged=1", log.line("c", "renewed", " a=1"));
        assertEquals("renewed b", log.line("other", "renewed", " b"), "per lease");
    }
}
