package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Extraction of libjcni.so from a jar into the cache, on fake jars; no privileges needed. */
class NativeLoaderTest {

    private static Path jarWith(Path dir, String name, byte[] lib) throws IOException {
        Path jar = dir.resolve(name);
        try (OutputStream out = Files.newOutputStream(jar); ZipOutputStream zip = new ZipOutputStream(out)) {
            zip.putNextEntry(new ZipEntry("io/jcni/linux/native/libjcni.so"));
            zip.write(lib);
            zip.closeEntry();
        }
        return jar;
    }

    @Test
    void extractsOnceNamedByCrcAndSize(@TempDir Path tmp) throws IOException {
        byte[] lib = "not really ELF".getBytes();
        Path jar = jarWith(tmp, "a.jar", lib);
        Path cache = tmp.resolve("cache");
        Path first = Native.extract(jar, cache);
        CRC32 crc = new CRC32();
        crc.update(lib);
        assertEquals("libjcni-" + Long.toHexString(crc.getValue()) + "-" + lib.length + ".so", first.getFileName().toString());
        assertArrayEquals(lib, Files.readAllBytes(first));

        Files.setLastModifiedTime(first, FileTime.fromMillis(1_000_000));
        assertEquals(first, Native.extract(jar, cache));
        assertEquals(1_000_000, Files.getLastModifiedTime(first).toMillis(), "a cached copy is reused, not rewritten");
        try (var files = Files.list(cache)) {
            assertEquals(1, files.count(), "no temporary files left behind");
        }

        Path other = Native.extract(jarWith(tmp, "b.jar", "another build".getBytes()), cache);
        assertNotEquals(first, other, "a different library gets a different name");
    }

    @Test
    void fallsBackToTheNextDirectory(@TempDir Path tmp) throws IOException {
        Path jar = jarWith(tmp, "a.jar", new byte[] {1, 2, 3});
        Path blocked = tmp.resolve("file-not-dir");
        Files.writeString(blocked, "x");
        Path got = Native.extract(jar, blocked.resolve("cache"), tmp.resolve("fallback"));
        assertTrue(got.startsWith(tmp.resolve("fallback")));
        assertThrows(IOException.class, () -> Native.extract(jar, blocked.resolve("cache")));
    }

    @Test
    void refusesACacheOthersCouldHavePlanted(@TempDir Path tmp) throws IOException {
        byte[] lib = "the real one".getBytes();
        Path jar = jarWith(tmp, "a.jar", lib);
        Path shared = tmp.resolve("shared");
        Files.createDirectory(shared);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path planted = shared.resolve(Native.extract(jar, tmp.resolve("probe")).getFileName());
        Files.writeString(planted, "planted by another user");

        Path got = Native.extract(jar, shared, tmp.resolve("private"));
        assertTrue(got.startsWith(tmp.resolve("private")), "a world-writable directory is passed over");
        assertArrayEquals(lib, Files.readAllBytes(got));
        IOException e = assertThrows(IOException.class, () -> Native.extract(jar, shared));
        assertTrue(e.getMessage().contains("writable by other users"), e.getMessage());
    }

    @Test
    void refusesAPlantedFileOrLink(@TempDir Path tmp) throws IOException {
        Path jar = jarWith(tmp, "a.jar", new byte[] {7});
        Path cache = tmp.resolve("cache");
        Path target = Native.extract(jar, cache);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertThrows(IOException.class, () -> Native.extract(jar, cache), "a file others may write");

        Files.delete(target);
        Files.createSymbolicLink(target, tmp.resolve("elsewhere.so"));
        IOException e = assertThrows(IOException.class, () -> Native.extract(jar, cache));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    }

    @Test
    void refusesAFileOwnedBySomeoneElse(@TempDir Path tmp) throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a file away");
        Path jar = jarWith(tmp, "a.jar", new byte[] {9});
        Path cache = tmp.resolve("cache");
        Path target = Native.extract(jar, cache);
        UserPrincipal nobody = tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(target, nobody);
        IOException e = assertThrows(IOException.class, () -> Native.extract(jar, cache));
        assertTrue(e.getMessage().contains("owned by nobody"), e.getMessage());
    }
}
