package io.jcni.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import io.jcni.testfixtures.World;
import io.jcni.types.Json;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What jcni answers when the caller is not root (run as nobody: {@code setpriv --reuid 65534
 * --regid 65534 --clear-groups}), when the netns is missing (compared with the reference bridge in
 * /usr/lib/cni) and when CNI_PATH is empty: each a reason and what to do, not an errno or a pid.
 */
@Tag("root")
class MessagesTest {
    static final List<String> NOBODY = List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups");

    Path tmp;
    Path bin;
    Path conf;
    String netns;
    World world;

    record Run(int rc, String out, String err) {}

    /** jcni's own classes (the build tree), readable by nobody; the test's other jars are not needed. */
    static String classpath() {
        List<String> own = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (e.endsWith("target/classes") || e.matches(".*/target/jcni-[a-z]+-.*\\.jar")) own.add(e);
        }
        return String.join(File.pathSeparator, own);
    }

    @BeforeEach
    void setUp() throws Exception {
        world = new World("jmsg");
        // World-readable (nobody runs in it), unique: other tests run at the same time.
        tmp = world.dir;
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        bin = Files.createDirectories(tmp.resolve("bin"));
        conf = Files.createDirectories(tmp.resolve("net.d"));
        Jvm.launcher(bin.resolve("bridge"), Launcher.Kind.PLUGIN, "the cli tests", classpath(), "io.jcni.plugins.PluginMain bridge");
        Files.writeString(conf.resolve("10-m.conflist"), """
                {"cniVersion":"1.0.0","name":"msgnet","plugins":[{"type":"bridge","bridge":"jmsg0",
                 "ipam":{"type":"host-local","subnet":"10.98.0.0/24","dataDir":"%s"}}]}""".formatted(tmp.resolve("ipam")));
        netns = world.host;
    }

    @AfterEach
    void tearDown() throws Exception {
        world.close();
    }

    static Run run(List<String> cmd, Map<String, String> env, String stdin) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        pb.environment().putAll(env);
        Path err = Files.createTempFile("jcni-msg-err", ".txt");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        if (stdin != null) p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + cmd);
        }
        String e = Files.readString(err);
        Files.delete(err);
        return new Run(p.exitValue(), out, e);
    }

    /** jcni as nobody inside the test's own network namespace: even a call that got past EPERM would change nothing here. */
    private Run jcniAsNobody(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        cmd.addAll(NOBODY);
        cmd.addAll(Jvm.commandOn(classpath(), Launcher.Kind.PLUGIN, Main.class.getName()));
        cmd.addAll(List.of(args));
        return run(cmd, Map.of("NETCONFPATH", conf.toString(), "CNI_PATH", bin.toString(), "JCNI_CACHE_DIR", tmp.resolve("cache").toString()), null);
    }

    @Test
    void addAsNonRootSaysItMustRunAsRoot() throws Exception {
        Run r = jcniAsNobody("add", "msgnet", "/var/run/netns/" + netns);
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.err().contains("[999 Internal error] must run as root (needs CAP_NET_ADMIN)"), r.err());
        assertFalse(r.err().contains("at io.jcni"), "no stack trace for a missing privilege: " + r.err());
    }

    @Test
    void daemonStartAsNonRootGivesTheReason() throws Exception {
        Run r = jcniAsNobody("daemon", "start");
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.err().contains("could not start the daemon: cannot write its log file /var/log/jcnid.log (permission denied); run as root"),
                r.err());
        assertFalse(r.err().matches("(?s).*daemon: [0-9]+\\s*$"), "a pid is no reason: " + r.err());
    }

    @Test
    void doctorAsNonRootSaysWhatItCouldNotRead() throws Exception {
        Path cache = Files.createDirectories(tmp.resolve("cache/results"));
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(cache.resolve("msgnet-c1-eth0"), "{}");
        Run r = jcniAsNobody("doctor", "--no-kernel", "--cache-dir", tmp.resolve("cache").toString(), "--socket", tmp.resolve("none.sock").toString());
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.out().contains("WARN  leftovers could not read the result cache in " + cache + " (permission denied): leftovers there were not checked"),
                r.out());
        assertTrue(r.out().contains("fix: run jcni doctor as root"), r.out());
        assertFalse(r.out().contains("every one belongs to a live attachment"), r.out());

        Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rwx------"));
        r = jcniAsNobody("doctor", "--no-kernel", "--socket", tmp.resolve("none.sock").toString());
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.out().contains("FAIL  config    could not read the configuration directory " + conf + " (permission denied)"), r.out());
        assertFalse(r.out().contains("holds no network configuration"), r.out());
    }

    @Test
    void aMissingNetnsIsAnsweredAsTheReferenceAnswersIt() throws Exception {
        Path ref = Path.of("/usr/lib/cni/bridge");
        assertTrue(Files.isExecutable(ref), "the reference plugins are installed in /usr/lib/cni");
        String missing = "/var/run/netns/" + netns + "-missing";
        String config = """
                {"cniVersion":"1.0.0","name":"msgnet","type":"bridge","bridge":"jmsg0",
                 "ipam":{"type":"host-local","subnet":"10.98.0.0/24","dataDir":"%s"}}""".formatted(tmp.resolve("ipam"));
        Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c1", "CNI_NETNS", missing, "CNI_IFNAME", "eth0",
                "CNI_PATH", bin + ":/usr/lib/cni");
        // Each in a private network namespace of its own: whatever the plugin does first touches nothing here.
        Run reference = run(List.of("unshare", "--net", ref.toString()), env, config);
        Run ours = run(List.of("unshare", "--net", bin.resolve("bridge").toString()), env, config);
        assertEquals(1, reference.rc(), reference.toString());
        assertEquals(1, ours.rc(), ours.toString());
        Map<String, Object> want = Json.parseObject(reference.out());
        Map<String, Object> got = Json.parseObject(ours.out());
        assertEquals(want.get("code"), got.get("code"), ours.out());
        assertEquals(want.get("msg"), got.get("msg"), ours.out());
    }
}
