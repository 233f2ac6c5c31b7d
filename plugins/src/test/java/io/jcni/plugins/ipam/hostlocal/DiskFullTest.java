package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An ADD that runs out of disk space (ENOSPC) part way leaves no reservation
 * and no temporary index file. The data directory is a small tmpfs of its own, filled so that the
 * disk runs out at each successive write of a two-range-set ADD in turn.
 */
@Tag("root")
class DiskFullTest {
    private static final int PAGE = 4096;
    private Path mnt;

    @BeforeEach
    void mount() throws Exception {
        mnt = Files.createTempDirectory("jcni-enospc-" + UUID.randomUUID().toString().substring(0, 8));
        run("mount", "-t", "tmpfs", "-o", "size=" + (64 * PAGE), "jcni-enospc", mnt.toString());
    }

    @AfterEach
    void unmount() throws Exception {
        if (mnt == null) return;
        run("umount", mnt.toString());
        Files.deleteIfExists(mnt);
    }

    @Test
    void aFullDiskAtAnyPointOfAddLeavesNothingReserved() throws Exception {
        Path dataDir = mnt.resolve("data");
        IpamConfig c = IpamConfig.load("{\"cniVersion\":\"1.1.0\",\"name\":\"full\",\"ipam\":{\"type\":\"host-local\","
                + "\"dataDir\":\"" + dataDir + "\",\"ranges\":[[{\"subnet\":\"10.7.0.0/24\"}],[{\"subnet\":\"fd07::/64\"}]]}}", null);
        int failures = 0;
        int successes = 0;
        for (int freePages = 0; freePages <= 12; freePages++) {
            clear();
            Files.createDirectories(dataDir);
            fillLeaving(freePages);
            try {
                HostLocal.add(c, "ctr", "eth0");
                successes++;
                assertEquals(2, reservations(dataDir).size());
                Files.deleteIfExists(mnt.resolve("filler"));  // room for DEL's index rewrite
                HostLocal.release(c, "ctr", "eth0");
            } catch (CniException e) {
                failures++;
                assertEquals(5, e.code(), freePages + " free pages: " + e.getMessage());
            }
            assertEquals(List.of(), reservations(dataDir), freePages + " free pages: no reservation is left");
            assertEquals(List.of(), temporaries(dataDir), freePages + " free pages: no temporary file is left");
        }
        assertTrue(failures > 0 && successes > 0, "the disk ran out in some runs and not in others: "
                + failures + " failures, " + successes + " successes");
    }

    /** Writes a file that leaves {@code pages} pages of the tmpfs free. */
    private void fillLeaving(int pages) throws IOException {
        long free = Files.getFileStore(mnt).getUsableSpace();
        long size = Math.max(0, free - (long) pages * PAGE);
        try (OutputStream out = Files.newOutputStream(mnt.resolve("filler"))) {
            byte[] chunk = new byte[PAGE];
            for (long n = 0; n < size; n += PAGE) out.write(chunk, 0, (int) Math.min(PAGE, size - n));
        }
    }

    private List<String> reservations(Path dataDir) throws IOException {
        List<String> out = new ArrayList<>();
        Path net = dataDir.resolve("full");
        if (!Files.isDirectory(net)) return out;
        try (Stream<Path> s = Files.list(net)) {
            s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip"))
                    .forEach(out::add);
        }
        return out;
    }

    private List<String> temporaries(Path dataDir) throws IOException {
        try (Stream<Path> s = Files.walk(dataDir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.contains("tmp")).toList();
        }
    }

    private void clear() throws IOException {
        try (Stream<Path> s = Files.walk(mnt)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) if (!p.equals(mnt)) Files.delete(p);
        }
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IOException(String.join(" ", cmd) + ": " + out);
    }
}
