package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The installed shims start jcnid when none answers (daemon/README.md, "Auto-start"). Each test
 * has its own socket in its world's directory, runs the shims as a runtime in the world's host
 * namespace would (nsenter into that network namespace only, so the mount namespace is this
 * machine's), and kills every jcnid it finds on its socket by pid. The surefire configuration
 * turns auto-start off for every other test; these calls turn it on.
 */
@Tag("root")
class AutostartTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    void fiftyConcurrentAddsStartExactlyOneDetachedJcnidInTheCallersNamespaces() throws Exception {
        int n = 50;
        try (World w = new World(); ExecutorService pool = Executors.newFixedThreadPool(n)) {
            Path sock = w.dir.resolve("run/jcnid.sock");
            String cgroup = testCgroup(w);
            try {
                String net = "auto" + w.id;
                String conf = """
                        {"cniVersion":"1.0.0","name":"%s","type":"bridge","bridge":"jtabr%s","isGateway":true,
                         "ipam":{"type":"host-local","subnet":"10.%d.0.0/16","dataDir":"%s"}}"""
                        .formatted(net, w.id.substring(0, 4), 100 + Integer.parseInt(w.id.substring(0, 2), 16) % 100, w.dir.resolve("ipam"));
                List<String> ns = new ArrayList<>();
                for (int i = 0; i < n; i++) ns.add(w.container(i));
                List<Future<Sh.Run>> adds = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    Map<String, String> env = autostartEnv(World.cniEnv("ADD", "auto" + i, ns.get(i), "eth0", jcni.bin.toString()), sock, cgroup);
                    adds.add(pool.submit(() -> inHostNet(w, env, conf, jcni.plugin("bridge").toString())));
                }
                for (int i = 0; i < n; i++) {
                    Sh.Run r = adds.get(i).get(300, TimeUnit.SECONDS);
                    assertEquals(0, r.rc(), "ADD " + i + ": " + r.out() + r.err());
                    assertTrue(r.out().contains("\"10."), r.out());
                }
                List<Long> daemons = Jcnid.daemonsOn(sock);
                assertEquals(1, daemons.size(), "jcnids on the socket: " + daemons);
                long pid = daemons.getFirst();
                assertEquals(pid, Long.parseLong(Files.readString(sock.resolveSibling("jcnid.pid")).strip()));
                String metrics = inHostNet(w, null, null, jcni.root.resolve("jcni/bin/jcnid").toString(), "metrics", "--socket", sock.toString()).ok().out();
                String served = metrics.lines().filter(l -> l.startsWith("jcnid_requests_total{plugin=\"bridge\",command=\"ADD\"}")).findFirst().orElse("none");
                System.out.println("AutostartTest: of " + n + " concurrent ADDs on a node without jcnid, jcnid served: " + served);

                // Where it runs: the caller's network namespace (the world's host, not a container's)
                // and mount namespace, its own session and cgroup, no CNI_ variable, stdio not ours.
                Path proc = Path.of("/proc/" + pid);
                assertEquals(inode(Path.of("/var/run/netns/" + w.host)), inode(proc.resolve("ns/net")));
                assertNotEquals(inode(Path.of(ns.getFirst())), inode(proc.resolve("ns/net")));
                assertEquals(Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")), Files.readSymbolicLink(proc.resolve("ns/mnt")));
                String stat = Files.readString(proc.resolve("stat"));
                String[] afterName = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                assertEquals(String.valueOf(pid), afterName[3], "session id (setsid): " + stat);
                List<String> environ = Arrays.asList(new String(Files.readAllBytes(proc.resolve("environ"))).split("\0"));
                assertTrue(environ.stream().noneMatch(e -> e.startsWith("CNI_") || e.startsWith("JCNI_")), environ.toString());
                assertTrue(environ.stream().anyMatch(e -> e.startsWith("PATH=")), environ.toString());
                assertEquals(Path.of("/dev/null"), Files.readSymbolicLink(proc.resolve("fd/0")));
                assertEquals(sock.resolveSibling("jcnid.log"), Files.readSymbolicLink(proc.resolve("fd/1")));
                assertEquals(sock.resolveSibling("jcnid.autostart.lock"), Files.readSymbolicLink(proc.resolve("fd/3")), "jcnid holds the start lock");
                String cgroups = Files.readString(proc.resolve("cgroup"));
                assertTrue(cgroups.lines().anyMatch(l -> l.endsWith("/" + cgroup)), "moved into " + cgroup + ": " + cgroups);
                assertFalse(Files.readString(Path.of("/proc/self/cgroup")).contains(cgroup));

                for (int i = 0; i < n; i++) {
                    Map<String, String> env = autostartEnv(World.cniEnv("DEL", "auto" + i, ns.get(i), "eth0", jcni.bin.toString()), sock, cgroup);
                    inHostNet(w, env, conf, jcni.plugin("bridge").toString()).ok();
                }
                assertEquals(List.of(pid), Jcnid.daemonsOn(sock), "the DELs used the same daemon");
            } finally {
                Jcnid.killDaemonsOn(sock);
                Jcnid.removeEmptyCgroup(cgroup);
            }
        }
    }

    @Test
    void switchedOffNoDaemonIsStarted() throws Exception {
        try (World w = new World()) {
            Path sock = w.dir.resolve("run/jcnid.sock");
            try {
                for (String off : List.of("0", "no", "off")) {
                    Map<String, String> env = autostartEnv(World.cniEnv("VERSION", "", "", "eth0", jcni.bin.toString()), sock, "");
                    env.put("JCNI_AUTOSTART", off);
                    Sh.Run r = Sh.run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"v\",\"type\":\"static\"}", 120, jcni.plugin("static").toString());
                    assertEquals(0, r.rc(), r.out() + r.err());
                    assertTrue(r.out().contains("supportedVersions"), r.out());
                }
                assertEquals(List.of(), Jcnid.daemonsOn(sock));
                assertFalse(Files.exists(sock.getParent()), "nothing is made next to the socket");
            } finally {
                Jcnid.killDaemonsOn(sock);
            }
        }
    }

    @Test
    void aMissingJcnidLeavesTheCallStandaloneAndIsLoggedOnce() throws Exception {
        try (World w = new World()) {
            Path sock = w.dir.resolve("run/jcnid.sock");
            Files.createDirectories(sock.getParent());
            // A prefix whose libexec is the real one and whose bin/jcnid does not exist.
            Path fake = w.dir.resolve("fake");
            Files.createDirectories(fake);
            Files.createSymbolicLink(fake.resolve("libexec"), jcni.root.resolve("jcni/libexec"));
            try {
                for (int i = 0; i < 2; i++) {
                    Map<String, String> env = autostartEnv(World.cniEnv("VERSION", "", "", "eth0", jcni.bin.toString()), sock, "");
                    env.put("JCNI_LIBEXEC", fake.resolve("libexec").toString());
                    Sh.Run r = Sh.run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"v\",\"type\":\"static\"}", 120, jcni.plugin("static").toString());
                    assertEquals(0, r.rc(), r.out() + r.err());
                    assertTrue(r.out().contains("supportedVersions"), r.out());
                    assertEquals("", r.err(), "the failed start is not the runtime's business");
                }
                assertEquals(List.of(), Jcnid.daemonsOn(sock));
                String log = Files.readString(sock.resolveSibling("jcnid.log"));
                assertEquals(1, log.lines().filter(l -> l.contains("autostart=failed")).count(), log);
                assertTrue(log.contains(fake.resolve("bin/jcnid").toString()), log);
                assertTrue(Files.exists(sock.resolveSibling("jcnid.autostart-failed")));
            } finally {
                Jcnid.killDaemonsOn(sock);
            }
        }
    }

    @Test
    void anUnwritableSocketDirectoryLeavesTheCallStandalone() throws Exception {
        try (World w = new World()) {
            Path dir = w.dir.resolve("ro");
            Path sock = dir.resolve("jcnid.sock");
            Files.createDirectories(dir);
            try {
                Map<String, String> env = autostartEnv(World.cniEnv("VERSION", "", "", "eth0", jcni.bin.toString()), sock, "");
                // Read-only for root too: a read-only bind mount, in a mount namespace of this call's own.
                Sh.Run r = Sh.run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"v\",\"type\":\"static\"}", 120,
                        "unshare", "--mount", "--propagation", "private", "sh", "-c",
                        "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" && exec \"$1\"", dir.toString(), jcni.plugin("static").toString());
                assertEquals(0, r.rc(), r.out() + r.err());
                assertTrue(r.out().contains("supportedVersions"), r.out());
                assertEquals(List.of(), Jcnid.daemonsOn(sock));
                try (Stream<Path> s = Files.list(dir)) {
                    assertEquals(List.of(), s.toList());
                }
            } finally {
                Jcnid.killDaemonsOn(sock);
            }
        }
    }

    private static Map<String, String> autostartEnv(Map<String, String> cni, Path sock, String cgroup) {
        Map<String, String> env = new HashMap<>(cni);
        env.put("JCNI_SOCKET", sock.toString());
        env.put("JCNI_AUTOSTART", "1");
        env.put("JCNI_CGROUP", cgroup);
        return env;
    }

    /** A call as a runtime in the world's host makes it: in that network namespace, in this mount namespace. */
    private static Sh.Run inHostNet(World w, Map<String, String> env, String stdin, String... cmd) {
        List<String> c = new ArrayList<>(List.of("nsenter", "--net=/var/run/netns/" + w.host));
        c.addAll(List.of(cmd));
        return Sh.run(env, stdin, 240, c.toArray(String[]::new));
    }

    /**
     * A cgroup for this test's daemon, below this JVM's own deepest cgroup (the shim creates it
     * under every hierarchy where the parent exists): the test moves nothing out of the cgroups
     * this machine puts tests in, as the shim's default ("jcnid" under each root) would.
     */
    private static String testCgroup(World w) throws IOException {
        String deepest = Files.readString(Path.of("/proc/self/cgroup")).lines()
                .map(l -> l.substring(l.indexOf(':', l.indexOf(':') + 1) + 1))
                .max(Comparator.comparingInt(String::length)).orElse("/");
        String parent = deepest.replaceAll("^/+", "");
        return (parent.isEmpty() ? "" : parent + "/") + "jcnid-test-" + w.id;
    }

    private static long inode(Path p) throws IOException {
        return ((Number) Files.getAttribute(p, "unix:ino")).longValue();
    }
}
