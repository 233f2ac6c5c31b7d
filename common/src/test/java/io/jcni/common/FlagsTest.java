package io.jcni.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class FlagsTest {
    @Test
    void durationsAreSecondsOrCarryAUnitEverywhere() {
        assertEquals(Duration.ofMillis(1500), Flags.parseDuration("--t", "1.5"));
        assertEquals(Duration.ofMillis(1500), Flags.parseDuration("--t", "1.5s"));
        assertEquals(Duration.ofMillis(500), Flags.parseDuration("--t", "500ms"));
        assertEquals(Duration.ofSeconds(30), Flags.parseDuration("--t", "30"));
        assertEquals(Duration.ofMinutes(2), Flags.parseDuration("--t", "2m"));
        assertEquals(Duration.ofMinutes(90), Flags.parseDuration("--t", "1.5h"));
        assertEquals(Duration.ofMillis(1), Flags.parseDuration("--t", "0.0001"), "a non-zero value never rounds to zero");
        assertEquals(Duration.ZERO, Flags.parseDuration("--t", "0"));
        for (String bad : List.of("", "s", "-1", "+1", "1e3", "NaN", "Infinity", "1.2.3", "1 s", "5d", "ms", "99999999999h")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Flags.parseDuration("--t", bad), bad);
            assertTrue(e.getMessage().startsWith("--t: not a duration"), e.getMessage());
        }
    }

    @Test
    void durationsAreHeldToTheirRange() {
        Flags f = new Flags(List.of("--t", "0", "--t", "2m", "--t=500ms"));
        assertTrue(f.next());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> f.duration(Duration.ofMillis(1), Duration.ofMinutes(1)));
        assertEquals("--t: 0 is not in [1ms, 60s]", e.getMessage());
        assertTrue(f.next());
        assertThrows(IllegalArgumentException.class, () -> f.duration(Duration.ofMillis(1), Duration.ofMinutes(1)));
        assertTrue(f.next());
        assertEquals(Duration.ofMillis(500), f.duration(Duration.ofMillis(1), Duration.ofMinutes(1)));
        assertFalse(f.next());
    }

    @Test
    void valuesFollowTheirFlagOrItsEqualsSign() {
        Flags f = new Flags(List.of("--socket", "/a", "--pid-file=/b", "pos", "-", "--n", "7", "--on", "--off=false", "--v"));
        assertTrue(f.next());
        assertEquals("--socket", f.name());
        assertEquals(Path.of("/a"), f.path());
        assertTrue(f.next());
        assertEquals("--pid-file", f.name());
        assertTrue(f.hasInlineValue());
        assertEquals("/b", f.value());
        assertTrue(f.next());
        assertFalse(f.isFlag());
        assertEquals("pos", f.token());
        assertTrue(f.next());
        assertFalse(f.isFlag(), "a lone dash is an argument (stdin, by convention)");
        assertTrue(f.next());
        assertEquals(7, f.integer(1, 10));
        assertTrue(f.next());
        assertTrue(f.switchValue());
        assertTrue(f.next());
        assertFalse(f.switchValue());
        assertTrue(f.next());
        assertEquals("--v needs a value", assertThrows(IllegalArgumentException.class, f::value).getMessage());
    }

    @Test
    void problemsNameTheFlag() {
        Flags f = new Flags(List.of("--n", "70000", "--s=maybe", "--bogus", "--p="));
        assertTrue(f.next());
        assertEquals("--n: not a number in [0, 65535]: 70000", assertThrows(IllegalArgumentException.class, () -> f.integer(0, 65535)).getMessage());
        assertTrue(f.next());
        assertEquals("--s is a switch: no value, =true or =false", assertThrows(IllegalArgumentException.class, f::switchValue).getMessage());
        assertTrue(f.next());
        assertEquals("unknown option --bogus", f.unknown().getMessage());
        assertTrue(f.next());
        assertEquals("--p: an empty path", assertThrows(IllegalArgumentException.class, f::path).getMessage());
        assertEquals(List.of(), f.rest());
    }
}
