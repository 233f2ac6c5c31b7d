package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bounded reads of files named by configuration (FIFOs, /dev/zero, 3 GB files). */
class SmallFileTest {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void readsARegularFileUpToTheLimit(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("resolv.conf");
        byte[] content = new byte[10_000];
        for (int i = 0; i < content.length; i++) content[i] = (byte) ('a' + i % 26);
        Files.write(f, content);
        assertArrayEquals(content, SmallFile.read(f, 10_000));
        assertEquals(Errno.EFBIG, assertThrows(ErrnoException.class, () -> SmallFile.read(f, 9_999)).errno());
        Files.write(f, new byte[0]);
        assertEquals(0, SmallFile.read(f, 10).length);
    }

    @Test
    void aMissingFileIsEnoent(@TempDir Path dir) {
        ErrnoException e = assertThrows(ErrnoException.class, () -> SmallFile.read(dir.resolve("nope"), 10));
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().startsWith("read " + dir.resolve("nope") + ": ENOENT"), e.getMessage());
    }

    /** A sparse file stands in for the 3 GB one: refused from its size, before a byte is read. */
    @Test
    void aHugeFileIsRefusedAtOnce(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("huge");
        try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
            raf.setLength(3L << 30);
        }
        ErrnoException e = assertTimeoutPreemptively(BOUND, () -> assertThrows(ErrnoException.class, () -> SmallFile.read(f, 1 << 20)));
        assertEquals(Errno.EFBIG, e.errno());
        assertEquals("larger than 1048576 bytes", e.detail());
    }

    @Test
    void fifosAndDevicesAreRefusedWithoutBlocking(@TempDir Path dir) {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, Scratch.exitCode(List.of("mkfifo", fifo.toString())));
        for (Path p : List.of(fifo, Path.of("/dev/zero"), Path.of("/dev/urandom"), dir)) {
            ErrnoException e = assertTimeoutPreemptively(BOUND, () -> assertThrows(ErrnoException.class, () -> SmallFile.read(p, 1 << 20)));
            assertEquals(Errno.EINVAL, e.errno(), p.toString());
        }
    }

    /** /proc files report size 0: read to their end, still within the limit. */
    @Test
    void aFileWhoseSizeLiesIsReadToTheLimit() {
        byte[] stat = SmallFile.read(Path.of("/proc/self/stat"), 1 << 16);
        assertTrue(stat.length > 0);
        assertEquals(Errno.EFBIG, assertThrows(ErrnoException.class, () -> SmallFile.read(Path.of("/proc/self/stat"), 3)).errno());
    }
}
