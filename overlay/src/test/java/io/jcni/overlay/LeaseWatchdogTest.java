package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.overlay.LeaseWatchdog.LeaseState;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeaseWatchdogTest {
    private static final long S = 1_000_000_000L;
    private final LeaseWatchdog dog = new LeaseWatchdog(Duration.ofSeconds(4), Duration.ofSeconds(900));

    @Test
    void aCallPastItsDeadlineIsStuckAndAnEndedThreadIsDead() {
        LeaseWatchdog.Clock work = new LeaseWatchdog.Clock();
        assertEquals(LeaseState.OK, dog.leaseVerdict(work, true, 100 * S), "idle");
        long token = work.busy(100 * S);
        assertEquals(LeaseState.OK, dog.leaseVerdict(work, true, 104 * S));
        assertEquals(LeaseState.STUCK, dog.leaseVerdict(work, true, 104 * S + 1_000_000));
        work.idle(token);
        assertEquals(LeaseState.OK, dog.leaseVerdict(work, true, 200 * S));
        assertEquals(LeaseState.DEAD, dog.leaseVerdict(work, false, 200 * S), "a thread that ended is dead, busy or not");
    }

    @Test
    void anAbandonedCallReturningLateDoesNotHideTheNextOnesStall() {
        LeaseWatchdog.Clock work = new LeaseWatchdog.Clock();
        long abandoned = work.busy(100 * S);
        work.busy(110 * S); // the new keep-alive's call
        work.idle(abandoned); // the old one returns at last
        assertEquals(LeaseState.STUCK, dog.leaseVerdict(work, true, 115 * S));
    }

    @Test
    void aWatchIsStalledOnlyWhenSilentPastItsDeadline() {
        LeaseWatchdog.Clock traffic = new LeaseWatchdog.Clock();
        assertFalse(dog.watchStalled(traffic, 5000 * S), "no watch open");
        traffic.busy(0); // nanoTime may be 0 or negative: still counts as busy
        assertFalse(dog.watchStalled(traffic, 900 * S));
        assertTrue(dog.watchStalled(traffic, 901 * S));
        traffic.busy(901 * S); // a progress notification
        assertFalse(dog.watchStalled(traffic, 1000 * S));
    }
}
