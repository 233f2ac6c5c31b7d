package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void doublesUpToTheCapWithJitterAndStartsOverAfterASuccess() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), new Random(1));
        List<Long> bases = List.of(1000L, 2000L, 4000L, 8000L, 16000L, 30000L, 30000L, 30000L);
        for (long base : bases) {
            long d = b.nextMillis();
            assertTrue(d >= base && d <= base + base / 2, d + " for base " + base);
        }
        b.reset();
        long d = b.nextMillis();
        assertTrue(d >= 1000 && d <= 1500, Long.toString(d));
    }

    @Test
    void jitterSpreadsHosts() {
        List<Long> first = new ArrayList<>();
        for (int seed = 0; seed < 20; seed++) first.add(new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), new Random(seed)).nextMillis());
        assertTrue(first.stream().distinct().count() > 10, first.toString());
    }

    @Test
    void capStaysWithinTheLease() {
        assertEquals(Duration.ofSeconds(20), Backoff.capWithin(Duration.ofSeconds(60).dividedBy(3)));
        assertEquals(Duration.ofSeconds(30), Backoff.capWithin(Duration.ofHours(24)));
        assertEquals(Duration.ofSeconds(1), Backoff.capWithin(Duration.ofSeconds(3).dividedBy(3)));
        assertEquals(Duration.ofSeconds(1), Backoff.capWithin(Duration.ofMillis(200)));
        Backoff small = new Backoff(Duration.ofSeconds(1), Backoff.capWithin(Duration.ofSeconds(3)), new Random(2));
        for (int i = 0; i < 10; i++) assertTrue(small.nextMillis() <= 4500);
    }
}
