package io.jcni.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.AtomicFile.Durability;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AtomicFileTest {
    @TempDir
    Path dir;

    @Test
    void writesAndReplacesWithExactPermissionsAndLeavesNoTemporary() throws IOException {
        Path f = dir.resolve("state.json");
        AtomicFile.write(f, "one", AtomicFile.PRIVATE, Durability.DURABLE);
        assertEquals("one", Files.readString(f));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        AtomicFile.write(f, "two", AtomicFile.EXECUTABLE, Durability.ATOMIC_ONLY);
        assertEquals("two", Files.readString(f));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        assertEquals(List.of("state.json"), names());
    }

    @Test
    void aFailedWriteLeavesTheTargetAndNoTemporary() throws IOException {
        Path f = dir.resolve("missing-dir").resolve("x");
        assertThrows(NoSuchFileException.class, () -> AtomicFile.write(f, "x", AtomicFile.PRIVATE, Durability.DURABLE));
        Path target = dir.resolve("t");
        Files.createDirectory(target.resolveSibling("sub"));
        // Renaming a file over a directory fails after the temporary file was written.
        Path overDir = dir.resolve("sub");
        assertThrows(IOException.class, () -> AtomicFile.write(overDir, "x", AtomicFile.PRIVATE, Durability.ATOMIC_ONLY));
        assertEquals(List.of("sub"), names());
    }

    @Test
    void temporaryNamesCarryTheWriterPid() {
        String n = AtomicFile.temporaryName("a.json", 4242, 0xabcL);
        assertEquals(".a.json.tmp-4242-abc", n);
        assertEquals(4242, AtomicFile.writerPid(n));
        assertTrue(AtomicFile.isTemporary(n));
        assertTrue(n.startsWith(AtomicFile.temporaryPrefix(Path.of("/x/a.json"))));
        for (String not : List.of("a.json", ".a.json", "a.json.tmp", ".a.json.tmp", ".a.tmp-12", ".a.tmp-12-", ".a.tmp-x1-ab",
                ".a.tmp-0-ab", ".a.tmp-12345678901-ab", ".tmp-1-a", ".a.tmp-1-xyz")) {
            assertFalse(AtomicFile.isTemporary(not), not);
        }
    }

    @Test
    void removeAbandonedKeepsLiveWritersAndOtherFiles() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        long deadPid = gone.pid();
        String dead = AtomicFile.temporaryName("a.json", deadPid, 1);
        String live = AtomicFile.temporaryName("a.json", ProcessHandle.current().pid(), 2);
        for (String n : List.of(dead, live, "a.json", ".a.json.tmp", "b.tmp-1-2")) Files.writeString(dir.resolve(n), "");
        assertEquals(1, AtomicFile.removeAbandoned(dir));
        assertEquals(List.of(".a.json.tmp", live, "a.json", "b.tmp-1-2").stream().sorted().toList(), names());
        assertEquals(0, AtomicFile.removeAbandoned(dir.resolve("none")));
        AtomicFile.removeTemporaries(dir.resolve("a.json"));
        assertEquals(List.of(".a.json.tmp", "a.json", "b.tmp-1-2"), names());
    }

    /** A writer under a lock killed between write and rename: the next write replaces its file, a delete removes it by name. */
    @Test
    void lockedWritesUseOneTemporaryNameThatTheNextWriteAndTheDeleteRemove() throws IOException {
        Path f = dir.resolve("k");
        Path killed = AtomicFile.lockedTemporary(f);
        assertEquals(".k.tmp-locked", killed.getFileName().toString());
        assertTrue(AtomicFile.isTemporary(".k.tmp-locked"));
        assertFalse(AtomicFile.isTemporary(".tmp-locked"));
        assertFalse(AtomicFile.isTemporary("k.tmp-locked"));
        Files.writeString(killed, "half");
        assertEquals(0, AtomicFile.removeAbandoned(dir), "no pid to judge by: left to the lock's holder");
        AtomicFile.writeLocked(f, "one", AtomicFile.PRIVATE, Durability.ATOMIC_ONLY);
        assertEquals("one", Files.readString(f));
        assertEquals(List.of("k"), names());

        Files.writeString(killed, "half");
        assertTrue(AtomicFile.deleteLocked(f));
        assertEquals(List.of(), names());
        Files.writeString(killed, "half");
        assertFalse(AtomicFile.deleteLocked(f), "only the temporary file was there");
        assertEquals(List.of(), names());
        Files.writeString(killed, "half");
        AtomicFile.removeTemporaries(f);
        assertEquals(List.of(), names());
    }

    private List<String> names() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return new ArrayList<>(s.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }
}
