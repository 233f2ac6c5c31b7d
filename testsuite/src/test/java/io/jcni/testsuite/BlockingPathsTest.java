package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import io.jcni.types.Json;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Paths from the request that would block or exhaust a plugin. A FIFO
 * as {@code CNI_NETNS} or {@code resolvConf} used to hang in open(2) (and, through jcnid, CPU-count
 * of them silenced the daemon); {@code resolvConf} = /dev/zero or a 3 GB file used to fill the
 * heap. Each must fail with a CNI error, standalone and through jcnid, and jcnid must go on
 * serving. Every call is bounded by a timeout; nothing asserts on speed.
 */
@Tag("root")
class BlockingPathsTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    private static String hostLocal(World w, String resolvConf) {
        return """
            {"cniVersion":"1.1.0","name":"bp%s","type":"host-local",
             "ipam":{"type":"host-local","subnet":"10.124.0.0/24","dataDir":"%s","resolvConf":"%s"}}
            """.formatted(w.id, w.dir.resolve("ipam"), resolvConf);
    }

    private static String bridge(World w) {
        return """
            {"cniVersion":"1.1.0","name":"bp%s","type":"bridge","bridge":"jtbp%s",
             "ipam":{"type":"host-local","subnet":"10.124.0.0/24","dataDir":"%s"}}
            """.formatted(w.id, w.id.substring(0, 4), w.dir.resolve("ipam"));
    }

    /** The call's error: exit 1, a CNI error object on stdout and no Java stack trace there. */
    private static Map<String, Object> cniError(Sh.Run r) {
        assertEquals(1, r.rc(), r.toString());
        assertFalse(r.out().contains("\tat ") || r.out().contains("Exception"), r.out());
        return Json.parseObject(r.out());
    }

    private static Sh.Run call(World w, Path executable, Map<String, String> env, String conf) {
        return w.inHost(env, conf, executable.toString());
    }

    private record Hostile(String what, String type, String netns, String resolvConf, long code, String msgPart) {}

    private static List<Hostile> hostile(String fifo, String huge, String container) {
        return List.of(
                new Hostile("netns FIFO", "bridge", fifo, null, -1, "not a namespace file"),
                new Hostile("netns /dev/zero", "bridge", "/dev/zero", null, -1, "not a namespace file"),
                new Hostile("resolvConf FIFO", "host-local", container, fifo, 7, "not a regular file"),
                new Hostile("resolvConf /dev/zero", "host-local", container, "/dev/zero", 7, "not a regular file"),
                new Hostile("resolvConf 3 GB", "host-local", container, huge, 7, "larger than"));
    }

    @Test
    void blockingOrHugePathsFailWithACniErrorStandaloneAndThroughJcnid() throws Exception {
        try (World w = new World()) {
            Path fifo = w.dir.resolve("fifo");
            Sh.run("mkfifo", fifo.toString()).ok();
            Path huge = w.dir.resolve("huge.conf");
            try (RandomAccessFile raf = new RandomAccessFile(huge.toFile(), "rw")) {
                raf.setLength(3L << 30); // sparse: no disk used
            }
            String container = w.container(0);
            List<Hostile> cases = hostile(fifo.toString(), huge.toString(), container);

            // Standalone: the JVM launchers the shim falls back to.
            for (Hostile h : cases) {
                Map<String, String> env = World.cniEnv("ADD", "bp-" + h.type(), h.netns(), "eth0", jcni.bin.toString());
                String conf = h.resolvConf() == null ? bridge(w) : hostLocal(w, h.resolvConf());
                Map<String, Object> err = cniError(call(w, jcni.root.resolve("jcni/libexec/" + h.type()), env, conf));
                if (h.code() > 0) assertEquals(h.code(), err.get("code"), h.what() + ": " + err);
                assertTrue(String.valueOf(err).contains(h.msgPart()), h.what() + ": " + err);
            }

            try (Daemon d = Daemon.startIn(w, jcni)) {
                for (Hostile h : cases) {
                    Map<String, String> env = d.env(World.cniEnv("ADD", "bp-" + h.type(), h.netns(), "eth0", jcni.bin.toString()));
                    String conf = h.resolvConf() == null ? bridge(w) : hostLocal(w, h.resolvConf());
                    Map<String, Object> err = cniError(call(w, jcni.plugin(h.type()), env, conf));
                    if (h.code() > 0) assertEquals(h.code(), err.get("code"), h.what() + ": " + err);
                    assertTrue(String.valueOf(err).contains(h.msgPart()), h.what() + ": " + err);
                }
                // More FIFO requests than CPUs at once, each its own attachment, and ordinary requests beside them.
                int k = Runtime.getRuntime().availableProcessors() + 2;
                try (ExecutorService pool = Executors.newFixedThreadPool(2 * k)) {
                    List<Future<Sh.Run>> fifos = new ArrayList<>();
                    List<Future<Sh.Run>> good = new ArrayList<>();
                    for (int i = 0; i < k; i++) {
                        Map<String, String> bad = d.env(World.cniEnv("ADD", "bpf" + i, fifo.toString(), "eth0", jcni.bin.toString()));
                        fifos.add(pool.submit(() -> call(w, jcni.plugin("bridge"), bad, bridge(w))));
                        Map<String, String> ok = d.env(World.cniEnv("ADD", "bpg" + i, container, "eth" + i, jcni.bin.toString()));
                        good.add(pool.submit(() -> call(w, jcni.plugin("host-local"), ok, hostLocal(w, ""))));
                    }
                    for (Future<Sh.Run> f : fifos) assertTrue(String.valueOf(cniError(f.get(300, TimeUnit.SECONDS))).contains("not a namespace file"));
                    for (Future<Sh.Run> f : good) f.get(300, TimeUnit.SECONDS).ok();
                }
                assertTrue(d.status().contains("status ok"));
                String metrics = d.metrics();
                assertTrue(metrics.contains("\njcnid_declined_total 0\n"), metrics);
                assertFalse(metrics.matches("(?s).*jcnid_timeouts_total\\{[^}]*} [1-9].*"), metrics);
            }
        }
    }
}
