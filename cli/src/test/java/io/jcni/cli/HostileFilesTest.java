package io.jcni.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.cli.doctor.Doctor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jcni doctor}, {@code jcni list} and {@code jcni add} against a configuration directory and
 * state directories holding a FIFO, a symlink to /dev/zero and a symlink to a secret file: each is a
 * finding or a refusal, nothing hangs (every call runs under a timeout far above its need), nothing
 * crashes, and neither the secret nor a line forged by a file's content reaches the output.
 */
class HostileFilesTest {
    private static final Duration BOUND = Duration.ofSeconds(60);
    private static final String SECRET = "root:$6$secret-hash:19000:0:99999:7:::";
    private static final String FORGED = "FAIL  config    forged";

    @TempDir
    Path tmp;
    Path conf;
    Path cache;
    Path data;
    Path secret;
    final Map<String, String> env = new HashMap<>();
    String out;
    String err;

    @BeforeEach
    void setUp() throws Exception {
        conf = Files.createDirectories(tmp.resolve("net.d"));
        cache = Files.createDirectories(tmp.resolve("cache"));
        data = Files.createDirectories(tmp.resolve("ipam"));
        secret = Files.writeString(tmp.resolve("shadow"), SECRET + "\n");
        env.put("NETCONFPATH", conf.toString());
        env.put("JCNI_CACHE_DIR", cache.toString());
        env.put("CNI_PATH", tmp.resolve("bin").toString());
        env.put("JCNI_SOCKET", tmp.resolve("none.sock").toString());
    }

    private static void mkfifo(Path p) throws Exception {
        assertEquals(0, new ProcessBuilder("mkfifo", p.toString()).inheritIO().start().waitFor(), "mkfifo");
    }

    private void goodNetwork() throws IOException {
        Files.writeString(conf.resolve("50-good.conflist"), """
                {"cniVersion":"1.1.0","name":"good","plugins":[{"type":"bridge","ipam":{"type":"host-local",
                 "subnet":"10.9.0.0/24","dataDir":"%s"}}]}""".formatted(data));
    }

    private void hostileConfigs() throws Exception {
        mkfifo(conf.resolve("10-pipe.conflist"));
        Files.createSymbolicLink(conf.resolve("20-zero.conf"), Path.of("/dev/zero"));
        Files.createSymbolicLink(conf.resolve("30-secret.json"), secret);
    }

    private int jcni(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = assertTimeoutPreemptively(BOUND, () -> new Main(env, new PrintStream(o, true, StandardCharsets.UTF_8),
                new PrintStream(e, true, StandardCharsets.UTF_8)).run(args));
        out = o.toString(StandardCharsets.UTF_8);
        err = e.toString(StandardCharsets.UTF_8);
        assertFalse((out + err).contains("secret-hash"), "the secret was printed:\n" + out + err);
        for (String line : (out + err).split("\n")) assertFalse(line.startsWith(FORGED), "a file forged a line:\n" + out);
        return rc;
    }

    @Test
    void listNamesEachHostileConfigAndKeepsTheGoodNetwork() throws Exception {
        goodNetwork();
        hostileConfigs();
        mkfifo(Files.createDirectories(cache.resolve("results")).resolve("good-c1-eth0"));
        assertEquals(0, jcni("list"), err);
        assertTrue(out.contains("good "), out);
        assertTrue(out.contains("10-pipe.conflist is a FIFO, not a regular file"), out);
        assertTrue(out.contains("20-zero.conf is a symlink to /dev/zero, outside"), out);
        assertTrue(out.contains("30-secret.json is a symlink to"), out);
        assertTrue(out.contains("skipped " + cache.resolve("results/good-c1-eth0") + ": "), out);
    }

    @Test
    void addFailsAtOnceNamingTheFileInsteadOfHanging() throws Exception {
        goodNetwork();
        mkfifo(conf.resolve("10-pipe.conflist"));
        assertEquals(1, jcni("add", "good", "/var/run/netns/none"));
        assertTrue(err.contains("[5 I/O failure]") && err.contains("10-pipe.conflist is a FIFO"), err);
        Files.delete(conf.resolve("10-pipe.conflist"));
        Files.createSymbolicLink(conf.resolve("10-zero.conflist"), Path.of("/dev/zero"));
        assertEquals(1, jcni("del", "good", "/var/run/netns/none"));
        assertTrue(err.contains("10-zero.conflist is a symlink to /dev/zero"), err);
    }

    @Test
    void doctorReportsEveryHostileFileWithoutPrintingItsContent() throws Exception {
        goodNetwork();
        hostileConfigs();
        Path net = Files.createDirectories(data.resolve("good"));
        Files.writeString(net.resolve("10.9.0.2"), "leaked-cid\r\neth0");
        Files.createSymbolicLink(net.resolve("10.9.0.3"), secret);
        Files.createSymbolicLink(net.resolve("10.9.0.4"), Path.of("/dev/zero"));
        mkfifo(net.resolve("10.9.0.5"));
        Files.writeString(net.resolve("10.9.0.6"), "cid-x\r\neth0\n" + FORGED + " line");
        Path results = Files.createDirectories(cache.resolve("results"));
        Files.createSymbolicLink(results.resolve("good-c1-eth0"), secret);

        ByteArrayOutputStream o = new ByteArrayOutputStream();
        int rc = assertTimeoutPreemptively(BOUND, () -> Doctor.run(List.of("--no-kernel"), env,
                new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream(), true)));
        String report = o.toString(StandardCharsets.UTF_8);
        assertEquals(1, rc, report);
        assertFalse(report.contains("secret-hash"), report);
        assertFalse(report.contains("root:"), report);
        for (String line : report.split("\n")) assertFalse(line.startsWith(FORGED), report);
        for (String f : List.of("10-pipe.conflist", "20-zero.conf", "30-secret.json")) {
            assertTrue(report.contains("FAIL  config    " + conf.resolve(f) + " does not load"), f + ":\n" + report);
        }
        for (String ip : List.of("10.9.0.3", "10.9.0.4", "10.9.0.5", "10.9.0.6")) {
            assertTrue(report.contains("WARN  leftovers " + net.resolve(ip) + " in host-local's addresses of \"good\" is not state"),
                    ip + ":\n" + report);
        }
        assertTrue(report.contains("address 10.9.0.2 in \"good\" is allocated to container leaked-cid (eth0)"), report);
        assertTrue(report.contains(results.resolve("good-c1-eth0") + " in the result cache is not state"), report);
    }
}
