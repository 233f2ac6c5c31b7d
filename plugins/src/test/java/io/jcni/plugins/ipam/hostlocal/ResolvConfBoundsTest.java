package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Dirs;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code resolvConf} naming a FIFO used to hang in open(2), one
 * naming /dev/zero or a 3 GB file filled the heap. Each is now a config error (7) before anything
 * is reserved. The timeout only bounds a regression; nothing asserts on speed.
 */
class ResolvConfBoundsTest {
    @TempDir
    Path dir;

    private String conf(Path resolvConf) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"n1\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\",\"dataDir\":\""
                + dir.resolve("ipam") + "\",\"subnet\":\"10.9.0.0/24\",\"resolvConf\":\"" + resolvConf + "\"}}";
    }

    @Test
    void fifoDeviceAndHugeFilesAreConfigErrorsAndReserveNothing() throws Exception {
        Path fifo = dir.resolve("fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        Path huge = dir.resolve("huge");
        try (RandomAccessFile raf = new RandomAccessFile(huge.toFile(), "rw")) {
            raf.setLength(3L << 30); // sparse
        }
        Map<Path, String> cases = Map.of(fifo, "not a regular file", Path.of("/dev/zero"), "not a regular file",
                huge, "larger than " + ResolvConf.MAX_BYTES + " bytes");
        for (var c : cases.entrySet()) {
            Map<String, Object> e = assertTimeoutPreemptively(Duration.ofSeconds(60),
                    () -> new PluginCall("host-local").env("CNI_CONTAINERID", "c1").fails("ADD", conf(c.getKey())));
            assertEquals(7L, e.get("code"), c.getKey() + ": " + e);
            assertEquals("resolvConf " + c.getKey() + ": " + c.getValue(), e.get("msg"));
        }
        Path net = dir.resolve("ipam").resolve("n1");
        assertTrue(Dirs.names(net).stream().allMatch(n -> n.equals("lock")), "nothing reserved");
    }

    @Test
    void aNormalResolvConfIsStillRead() throws Exception {
        Path rc = dir.resolve("resolv.conf");
        Files.writeString(rc, "nameserver 10.9.0.53\n");
        Map<String, Object> r = new PluginCall("host-local").env("CNI_CONTAINERID", "c1").ok("ADD", conf(rc));
        assertEquals(Map.of("nameservers", List.of("10.9.0.53")), r.get("dns"));
    }
}
