package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** When a dead host's addresses are due for release: only after the grace period of its own absence. */
class AbsentHostsTest {
    static final long S = 1_000_000_000L;

    @Test
    void aHostAbsentForTheGracePeriodIsDueAndNotBefore() {
        AbsentHosts h = new AbsentHosts("me", Duration.ofSeconds(30));
        assertEquals(Set.of(), h.due(Set.of("me", "b", "c"), Set.of("me", "b"), 100 * S)); // c first seen absent
        assertEquals(Set.of(), h.due(Set.of("me", "b", "c"), Set.of("me", "b"), 129 * S));
        assertEquals(Set.of("c"), h.due(Set.of("me", "b", "c"), Set.of("me", "b"), 130 * S));
    }

    @Test
    void aHostThatComesBackStartsAgainWhenItGoesAgain() {
        AbsentHosts h = new AbsentHosts("me", Duration.ofSeconds(30));
        h.due(Set.of("b"), Set.of(), 0);
        h.due(Set.of("b"), Set.of("b"), 20 * S); // back (a jcnid restart)
        assertEquals(Set.of(), h.due(Set.of("b"), Set.of(), 40 * S)); // gone again: a new absence
        assertEquals(Set.of(), h.due(Set.of("b"), Set.of(), 69 * S));
        assertEquals(Set.of("b"), h.due(Set.of("b"), Set.of(), 70 * S));
    }

    @Test
    void aHostThatOwnsNothingAnyMoreIsForgotten() {
        AbsentHosts h = new AbsentHosts("me", Duration.ofSeconds(30));
        h.due(Set.of("b"), Set.of(), 0);
        h.due(Set.of(), Set.of(), 10 * S); // its addresses were given back meanwhile (by another host)
        assertEquals(Set.of(), h.due(Set.of("b"), Set.of(), 35 * S)); // owning again: counted from now
        assertEquals(Set.of("b"), h.due(Set.of("b"), Set.of(), 65 * S));
    }

    @Test
    void thisHostNeverJudgesItself() {
        AbsentHosts h = new AbsentHosts("me", Duration.ofSeconds(1));
        h.due(Set.of("me"), Set.of(), 0);
        assertEquals(Set.of(), h.due(Set.of("me"), Set.of(), 100 * S)); // its own key is missing only while its lease is renewed
    }
}
