package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Attachment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** host-local's reservations read from outside the plugin, and the plugin's own reads, against hostile files. */
class ReservationsTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private static final String SECRET = "root:$6$secret-hash:19000:0:99999:7:::";

    @TempDir
    Path dataDir;
    @TempDir
    Path outside;

    private Path net() throws Exception {
        return Files.createDirectories(dataDir.resolve("net1"));
    }

    private static void mkfifo(Path p) throws Exception {
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).inheritIO().start().waitFor(), "mkfifo");
    }

    @Test
    void readsCurrentAndLegacyReservationsAndSkipsTheRest() throws Exception {
        Path d = net();
        Files.writeString(d.resolve("10.0.0.2"), "cid-a\r\neth0");
        Files.writeString(d.resolve("10.0.0.3"), "  cid-b \n");
        Files.writeString(d.resolve("fd00::2"), "cid-c\r\nnet1");
        Files.writeString(d.resolve("lock"), "");
        Files.writeString(d.resolve("last_reserved_ip.0"), "10.0.0.3");
        Reservations.Scan s = Reservations.scan(d);
        assertEquals(List.of(), s.malformed());
        assertNull(s.unreadable());
        List<String> got = s.reservations().stream().map(r -> r.ip() + "=" + r.containerId() + "/" + r.ifname()).sorted().toList();
        assertEquals(List.of("10.0.0.2=cid-a/eth0", "10.0.0.3=cid-b/null", "fd00::2=cid-c/net1"), got);
    }

    @Test
    void hostileFilesAreMalformedWithoutTheirContentAndNothingHangs() throws Exception {
        Path d = net();
        Files.writeString(d.resolve("10.0.0.2"), "cid-a\r\neth0");
        Files.writeString(outside.resolve("shadow"), SECRET);
        Files.createSymbolicLink(d.resolve("10.0.0.5"), outside.resolve("shadow"));
        Files.createSymbolicLink(d.resolve("10.0.0.6"), Path.of("/dev/zero"));
        mkfifo(d.resolve("10.0.0.7"));
        Files.writeString(d.resolve("10.0.0.8"), "cid-x\r\neth0\nFAIL  config    forged line");
        Reservations.Scan s = assertTimeoutPreemptively(BOUND, () -> Reservations.scan(d));
        assertEquals(List.of("10.0.0.2"), s.reservations().stream().map(r -> r.ip().toString()).toList());
        assertEquals(List.of("10.0.0.5", "10.0.0.6", "10.0.0.7", "10.0.0.8"),
                s.malformed().stream().map(m -> m.file().getFileName().toString()).sorted().toList());
        for (Reservations.Malformed m : s.malformed()) {
            assertFalse(m.reason().contains("secret") || m.reason().contains("forged") || m.reason().contains("\n"), m.reason());
        }
    }

    @Test
    void theReservationParserAcceptsOnlyWhatThePluginWrites() {
        assertEquals(List.of("c1", "eth0"), List.of(ReservationFormat.parse("c1\r\neth0")));
        assertEquals("c1", ReservationFormat.parse("c1")[0]);
        assertNull(ReservationFormat.parse("c1")[1]);
        assertNull(ReservationFormat.parse("c1\r\neth0\nFAIL x"));
        assertNull(ReservationFormat.parse("root:x:0:0:root:/root:/bin/bash"));
        assertNull(ReservationFormat.parse(""));
    }

    @Test
    void theStoreSkipsAFifoInsteadOfBlockingOnIt() throws Exception {
        try (DiskStore s = DiskStore.open(dataDir, "net2")) {
            mkfifo(s.directory().resolve("10.0.0.9"));
            Files.writeString(s.directory().resolve("10.0.0.4"), "gone\r\neth0");
            List<?> released = assertTimeoutPreemptively(BOUND, () -> {
                s.lock();
                try {
                    return s.releaseAllExcept(Set.of(new Attachment("kept", "eth0")));
                } finally {
                    s.unlock();
                }
            });
            assertEquals(1, released.size(), released.toString());
            assertTrue(Files.exists(s.directory().resolve("10.0.0.9")), "the FIFO is not a reservation GC may judge");
        }
    }
}
