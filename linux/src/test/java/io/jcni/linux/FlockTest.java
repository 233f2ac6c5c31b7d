package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** flock(2) needs no privileges; it interoperates with util-linux flock(1) as with Go's syscall.Flock. */
class FlockTest {

    @Test
    void exclusiveAgainstOtherDescriptorsAndProcesses(@TempDir Path dir) {
        Path file = dir.resolve("lock");
        try (Flock held = Flock.lock(file)) {
            assertEquals(file, held.path());
            assertTrue(Files.exists(file));
            assertEquals(Optional.empty(), Flock.tryLock(file));
            assertEquals(1, Scratch.exitCode(List.of("flock", "-n", file.toString(), "true")));
        }
        assertEquals(0, Scratch.exitCode(List.of("flock", "-n", file.toString(), "true")));
        Optional<Flock> again = Flock.tryLock(file);
        assertTrue(again.isPresent());
        again.get().close();
    }

    @Test
    void directoriesCanBeLocked(@TempDir Path dir) {
        try (Flock held = Flock.lock(dir)) {
            assertEquals(dir, held.path());
            assertEquals(1, Scratch.exitCode(List.of("flock", "-n", dir.toString(), "true")));
        }
    }

    /** sbr locks the container's netns file, which cannot be opened for writing. */
    @Test
    @org.junit.jupiter.api.Tag("root")
    void aNetnsFileCanBeLocked() {
        try (Scratch s = Scratch.create()) {
            Path ns = Netns.pathOf(s.name);
            try (Flock held = Flock.lock(ns)) {
                assertEquals(Optional.empty(), Flock.tryLock(ns));
                assertEquals(1, Scratch.exitCode(List.of("flock", "-n", ns.toString(), "true")));
            }
            Optional<Flock> again = Flock.tryLock(ns);
            assertTrue(again.isPresent());
            again.get().close();
        }
    }
}
