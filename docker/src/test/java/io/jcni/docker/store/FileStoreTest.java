package io.jcni.docker.store;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.docker.api.DriverException;
import io.jcni.types.DamagedStateException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileStoreTest {
    @TempDir
    Path tmp;

    @Test
    void putGetListDelete() throws Exception {
        FileStore s = new FileStore(tmp.resolve("state"));
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(s.dir())));
        assertTrue(s.get("pools", "a").isEmpty());
        s.put("pools", "a", Map.of("x", 1L));
        s.put("pools", "b", Map.of("x", 2L));
        s.put("pools", "a", Map.of("x", 3L));
        assertEquals(3L, s.get("pools", "a").orElseThrow().get("x"));
        assertEquals(java.util.List.of("a", "b"), java.util.List.copyOf(s.list("pools").keySet()));
        s.delete("pools", "a");
        s.delete("pools", "a");
        assertEquals(java.util.List.of("b"), java.util.List.copyOf(s.list("pools").keySet()));
        assertTrue(s.list("nothing").isEmpty());
    }

    @Test
    void leftoverTemporaryFileIsRemovedAndOldDocumentKept() throws Exception {
        FileStore s = new FileStore(tmp);
        s.put("endpoints", "e1", Map.of("v", "old"));
        Path tmpFile = tmp.resolve("endpoints/e1.json.tmp");
        Files.writeString(tmpFile, "{\"v\": \"half-writ"); // a crash in the middle of a put
        assertEquals("old", s.list("endpoints").get("e1").get("v"));
        assertFalse(Files.exists(tmpFile));
    }

    @Test
    void damagedFileAndUnsafeNamesAreClearErrors() throws Exception {
        FileStore s = new FileStore(tmp);
        Files.createDirectories(tmp.resolve("networks"));
        Files.writeString(tmp.resolve("networks/n.json"), "{not json");
        DamagedStateException e = assertThrows(DamagedStateException.class, () -> s.get("networks", "n"));
        assertTrue(e.getMessage().startsWith("damaged state file " + tmp.resolve("networks/n.json") + ": not JSON"), e.getMessage());
        assertThrows(DriverException.class, () -> s.put("networks", "../x", Map.of()));
        assertThrows(DriverException.class, () -> s.get("..", "x"));
    }
}
