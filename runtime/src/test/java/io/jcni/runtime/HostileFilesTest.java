package io.jcni.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniException;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files a configuration or state directory can hold that no reader may open: each is skipped with a
 * reason naming what it is, and nothing hangs (every call is bounded by a timeout far above its need).
 */
class HostileFilesTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final String SECRET = "root:$6$secret-hash-line:19000:0:99999:7:::";
    private static final String GOOD = """
            {"cniVersion":"1.0.0","name":"good","plugins":[{"type":"bridge"}]}""";

    @TempDir
    Path dir;
    @TempDir
    Path outside;

    private Path fifo(String name) throws Exception {
        Path p = dir.resolve(name);
        Process mk = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
        assertEquals(0, mk.waitFor(), "mkfifo");
        return p;
    }

    private Path secretOutside() throws IOException {
        return Files.writeString(outside.resolve("shadow"), SECRET + "\n{\"name\":\"forged\"}\n");
    }

    @Test
    void aFifoIsRefusedWithoutOpeningIt() throws Exception {
        Path f = fifo("10-pipe.conflist");
        DirectoryFile.RefusedException e = assertThrows(DirectoryFile.RefusedException.class,
                () -> assertTimeoutPreemptively(BOUND, () -> DirectoryFile.read(dir, f, 1024)));
        assertTrue(e.getMessage().contains("a FIFO, not a regular file"), e.getMessage());
    }

    @Test
    void aDeviceBehindASymlinkIsRefused() throws Exception {
        Path f = Files.createSymbolicLink(dir.resolve("zero.conf"), Path.of("/dev/zero"));
        DirectoryFile.RefusedException e = assertThrows(DirectoryFile.RefusedException.class,
                () -> assertTimeoutPreemptively(BOUND, () -> DirectoryFile.read(dir, f, 1024)));
        assertTrue(e.getMessage().contains("outside"), e.getMessage());
    }

    @Test
    void aDeviceInsideTheDirectoryIsNamed() throws Exception {
        // /dev itself as the directory: the device is inside it, and still no regular file.
        DirectoryFile.RefusedException e = assertThrows(DirectoryFile.RefusedException.class,
                () -> assertTimeoutPreemptively(BOUND, () -> DirectoryFile.read(Path.of("/dev"), Path.of("/dev/zero"), 1024)));
        assertTrue(e.getMessage().contains("a character device"), e.getMessage());
    }

    @Test
    void aSymlinkLeavingTheDirectoryIsNotFollowed() throws Exception {
        Path f = Files.createSymbolicLink(dir.resolve("x.conf"), secretOutside());
        DirectoryFile.RefusedException e = assertThrows(DirectoryFile.RefusedException.class, () -> DirectoryFile.read(dir, f, 1024));
        assertFalse(e.getMessage().contains("secret-hash"), e.getMessage());
    }

    @Test
    void aSymlinkInsideTheDirectoryIsFollowed() throws Exception {
        Files.writeString(dir.resolve("real.json.disabled"), GOOD);
        Path f = Files.createSymbolicLink(dir.resolve("10-good.conflist"), Path.of("real.json.disabled"));
        assertEquals(GOOD, DirectoryFile.readUtf8(dir, f, 1024));
    }

    @Test
    void aFileLargerThanTheLimitIsRefusedBeforeItIsRead() throws Exception {
        Path f = dir.resolve("huge.conf");
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "rw")) {
            r.setLength(3L << 30); // sparse: 3 GiB that take no disk
        }
        DirectoryFile.RefusedException e = assertThrows(DirectoryFile.RefusedException.class,
                () -> assertTimeoutPreemptively(BOUND, () -> DirectoryFile.read(dir, f, DirectoryFile.CONFIG_LIMIT)));
        assertTrue(e.getMessage().contains("larger than"), e.getMessage());
    }

    @Test
    void listingSkipsEachHostileFileWithItsReasonAndKeepsTheGoodOne() throws Exception {
        Files.writeString(dir.resolve("50-good.conflist"), GOOD);
        fifo("10-pipe.conflist");
        Files.createSymbolicLink(dir.resolve("20-zero.conf"), Path.of("/dev/zero"));
        Files.createSymbolicLink(dir.resolve("30-secret.json"), secretOutside());
        ConfigLoader.Listing l = assertTimeoutPreemptively(BOUND, () -> ConfigLoader.list(dir));
        assertEquals(List.of("good"), l.networks().stream().map(ConfigLoader.Network::name).toList());
        assertEquals(3, l.skipped().size(), l.skipped().toString());
        for (ConfigLoader.Skipped s : l.skipped()) {
            assertTrue(s.reason().contains("not read"), s.reason());
            assertFalse(s.reason().contains("secret-hash") || s.reason().contains("forged"), s.reason());
            assertEquals(null, s.networkName(), "no name is read from a refused file");
        }
    }

    @Test
    void loadingByNameFailsOnARefusedFileInsteadOfHanging() throws Exception {
        Files.writeString(dir.resolve("50-good.conflist"), GOOD);
        fifo("10-pipe.conflist");
        CniException e = assertThrows(CniException.class, () -> assertTimeoutPreemptively(BOUND, () -> ConfigLoader.load(dir, "good")));
        assertEquals(5, e.code());
        assertTrue(e.getMessage().contains("10-pipe.conflist"), e.getMessage());
    }

    @Test
    void cacheReadersSkipOrRefuseHostileEntries() throws Exception {
        Path results = Files.createDirectories(dir.resolve("results"));
        Process mk = new ProcessBuilder("mkfifo", results.resolve("net-cid-eth0").toString()).inheritIO().start();
        assertEquals(0, mk.waitFor());
        Files.createSymbolicLink(results.resolve("net-cid2-eth0"), secretOutside());
        ResultCache cache = new ResultCache(dir);
        assertEquals(List.of(), assertTimeoutPreemptively(BOUND, () -> cache.list(null)));
        CniException e = assertThrows(CniException.class, () -> assertTimeoutPreemptively(BOUND, () -> cache.get("net", "cid", "eth0")));
        assertEquals(5, e.code());
        e = assertThrows(CniException.class, () -> cache.get("net", "cid2", "eth0"));
        assertFalse(e.getMessage().contains("secret-hash"), e.getMessage());
    }
}
