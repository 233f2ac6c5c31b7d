package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The package on this machine: dpkg -i, a bridge + host-local ADD/CHECK/DEL from /opt/cni/bin in a
 * private netns with every other Java hidden, jcnid started by socket activation from the package's
 * launcher, then dpkg --purge leaves nothing of ours. It installs into the real /opt/cni/bin and
 * /opt/jcni, so it first makes sure it would overwrite nothing and skips (saying why) otherwise.
 *
 * <p>The node already has plugins that are not jcni's, as a Kubernetes node does: a foreign
 * /opt/cni/bin/bridge (which jcni also brings) and a foreign plugin jcni does not have. dpkg -i
 * keeps the first aside as bridge.distrib, saying so, and leaves the second alone; the purge puts
 * the first back and leaves both, and the directory, in place. Both are removed by the test
 * afterwards, whatever happened.
 *
 * <p>/run/jcni and /var/lib/cni/jcni are shared with every jcni test on this machine (the native
 * library's extraction directory, nftables ownership records of test namespaces), and the purge
 * empties them. So every dpkg and plugin call runs in a mount namespace where both are a scratch
 * tmpfs, held open by a sleeping process; the rest of the file system is the real one.
 */
@Tag("root")
class PackageInstallTest {
    /** Paths the package or its scripts create outside its file list, checked before and after. */
    static final List<String> RUNTIME_PATHS = List.of("/opt/jcni", "/var/log/jcnid.log");
    /** Shared with every jcni on the node, so the purge leaves what is not its own; a scratch tmpfs in the test's mount namespace. */
    static final List<String> SHARED_DIRS = List.of("/run/jcni", "/var/lib/cni/jcni");
    /** Hides the JDKs (/usr/lib/jvm, where /usr/bin/java also points) in a private mount namespace. */
    static final String NO_JAVA = "mount -t tmpfs jcni-no-jdk /usr/lib/jvm && exec \"$@\"";
    static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    @Test
    void installsRunsWithoutAJdkAndPurgesClean() throws IOException {
        Path out = Files.createTempDirectory("jcni-pkg-");
        Path deb = PackageTest.buildDeb(out);
        List<String> files = PackageTest.files(deb);
        // Check first: never overwrite or later remove what is not ours.
        Assumptions.assumeFalse(Sh.run("dpkg-query", "-W", "-f=${Status}", "jcni").out().contains("installed"),
                "the jcni package is already installed on this machine; not touching it");
        List<String> present = new ArrayList<>();
        for (String f : files) if (Files.exists(Path.of(f), LinkOption.NOFOLLOW_LINKS)) present.add(f);
        for (String p : RUNTIME_PATHS) if (Files.exists(Path.of(p), LinkOption.NOFOLLOW_LINKS)) present.add(p);
        Assumptions.assumeTrue(present.isEmpty(), "skipped: dpkg -i would overwrite or share files that are not this test's: " + present);
        boolean optCniExisted = Files.exists(Path.of("/opt/cni"));
        boolean binExisted = Files.exists(BIN);
        Assumptions.assumeFalse(Files.exists(FOREIGN_BRIDGE.resolveSibling("bridge.distrib"), LinkOption.NOFOLLOW_LINKS)
                || Files.exists(FOREIGN_PLUGIN, LinkOption.NOFOLLOW_LINKS), "skipped: " + BIN + " already holds the test's foreign files");
        try {
            Files.createDirectories(BIN);
            Files.writeString(FOREIGN_BRIDGE, FOREIGN_SCRIPT);
            Files.writeString(FOREIGN_PLUGIN, FOREIGN_SCRIPT);
            for (Path f : List.of(FOREIGN_BRIDGE, FOREIGN_PLUGIN)) Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
            installAndPurge(deb, files);
        } finally {
            // Whatever happened: the foreign files go, and so does every directory the test made.
            Sh.quiet("dpkg", "--purge", "jcni");
            for (Path f : List.of(FOREIGN_BRIDGE, FOREIGN_PLUGIN, FOREIGN_BRIDGE.resolveSibling("bridge.distrib"))) Files.deleteIfExists(f);
            if (!binExisted) Sh.quiet("rmdir", BIN.toString());
            if (!optCniExisted) Sh.quiet("rmdir", "/opt/cni");
            Sh.quiet("rm", "-rf", out.toString());
        }
    }

    static final Path BIN = Path.of("/opt/cni/bin");
    static final Path FOREIGN_BRIDGE = BIN.resolve("bridge");
    static final Path FOREIGN_PLUGIN = BIN.resolve("jcni-test-foreign-plugin");
    static final String FOREIGN_SCRIPT = "#!/bin/sh\n# not jcni's: PackageInstallTest's stand-in for a node's own plugin\nexit 0\n";
    /** Files another jcni (a source install, another test) keeps in the shared directories: the purge leaves them. */
    static final List<String> OTHERS_STATE = List.of("/run/jcni/host-device/other-attachment", "/var/lib/cni/jcni/nft/other-install");

    private void installAndPurge(Path deb, List<String> files) throws IOException {
        for (String d : SHARED_DIRS) Files.createDirectories(Path.of(d));
        StringBuilder mounts = new StringBuilder();
        for (String d : SHARED_DIRS) mounts.append("mount -t tmpfs jcni-pkg-test ").append(d).append(" && ");
        for (String f : OTHERS_STATE) {
            mounts.append("mkdir -p ").append(Path.of(f).getParent()).append(" && echo other > ").append(f).append(" && ");
        }
        // slave: namespaces the test creates later (mounts under /run/netns) show up in here; the tmpfs mounts stay in here.
        Process holder = new ProcessBuilder("unshare", "-m", "--propagation", "slave", "sh", "-c",
                mounts + "echo ready && exec sleep 900").redirectErrorStream(true).start();
        String ready = new String(holder.getInputStream().readNBytes(6));
        assertEquals("ready\n", ready, "mount namespace holder");
        mnt = "--mount=/proc/" + holder.pid() + "/ns/mnt";
        Sh.Run purge;
        try (World w = new World()) {
            Sh.Run install = inMnt(600, null, "dpkg", "-i", deb.toString()).ok();
            assertTrue((install.out() + install.err()).contains("jcni: " + FOREIGN_BRIDGE + " (not from any package) is kept as "
                    + FOREIGN_BRIDGE + ".distrib while jcni is installed"), "dpkg -i says what it kept aside:\n" + install.err());
            assertEquals(FOREIGN_SCRIPT, Files.readString(FOREIGN_BRIDGE.resolveSibling("bridge.distrib")), "the foreign bridge is kept");
            assertTrue(Files.mismatch(FOREIGN_BRIDGE, Path.of("/opt/jcni/bin/jcni-shim")) < 0, "/opt/cni/bin/bridge is jcni's shim");
            assertEquals(FOREIGN_SCRIPT, Files.readString(FOREIGN_PLUGIN), "a plugin jcni does not have is left alone");
            // Again (an upgrade to the same version): the diversions stand, nothing foreign is moved twice.
            Sh.Run again = inMnt(600, null, "dpkg", "-i", deb.toString()).ok();
            assertFalse((again.out() + again.err()).contains("is kept as"), again.err());
            assertEquals(FOREIGN_SCRIPT, Files.readString(FOREIGN_BRIDGE.resolveSibling("bridge.distrib")), "still kept after a reinstall");
            assertTrue(Files.mismatch(FOREIGN_BRIDGE, Path.of("/opt/jcni/bin/jcni-shim")) < 0, "/opt/cni/bin/bridge is still jcni's");
            assertTrue(Files.isRegularFile(Path.of("/opt/jcni/lib/jcni.aot")), "postinst made the AOT cache");
            assertFalse(Files.exists(Path.of("/run/jcni/jcnid.sock")), "the package starts no daemon");

            // Nothing Java but the package's own runtime is reachable.
            String probe = noJava(w, Map.of(), null, "sh", "-c", "ls -A /usr/lib/jvm | wc -l; command -v java || echo no-java; jcni version").ok().out();
            assertTrue(noJava(w, Map.of(), null, "jcni", "doctor", "--no-kernel", "--conf-dir", w.dir.toString()).out()
                    .contains("jcni doctor:"), "jcni doctor runs from the package");
            assertTrue(probe.startsWith("0\nno-java\njcni "), probe);

            String cn = w.container(1);
            String conf = """
                    {"cniVersion":"1.1.0","name":"pkg-%s","type":"bridge","bridge":"jpk%s","isGateway":true,
                     "ipam":{"type":"host-local","subnet":"10.251.7.0/24","dataDir":"%s"}}""".formatted(w.id, w.id.substring(0, 6), w.dir.resolve("ipam"));
            Map<String, String> add = cni("ADD", w, cn);
            String result = noJava(w, add, conf, "/opt/cni/bin/bridge").ok().out();
            assertTrue(result.contains("\"10.251.7.2/24\""), result);
            String withPrev = conf.substring(0, conf.lastIndexOf('}')) + ",\"prevResult\":" + result + "}";
            noJava(w, cni("CHECK", w, cn), withPrev, "/opt/cni/bin/bridge").ok();
            noJava(w, cni("DEL", w, cn), conf, "/opt/cni/bin/bridge").ok();
            assertFalse(Sh.run("ip", "-n", "jts-c1-" + w.id, "link", "show", "eth0").rc() == 0, "DEL removed eth0");

            // The daemon too runs on the package's runtime alone.
            SocketActivation.check(Path.of("/opt/jcni/bin/jcnid"), Path.of("/opt/cni/bin"), w.dir,
                    List.of("nsenter", mnt, "--", "unshare", "-m", "--propagation", "private", "sh", "-c", NO_JAVA, "sh"));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            purge = inMnt(300, null, "dpkg", "--purge", "jcni");
        }
        purge.ok();
        String shared = inMnt(30, null, "sh", "-c", "find " + String.join(" ", SHARED_DIRS) + " -mindepth 1 -type f | sort").ok().out();
        holder.destroy();
        assertEquals(String.join("\n", OTHERS_STATE) + "\n", shared, "the purge removes jcni's own run-time files, and only those");
        assertEquals(FOREIGN_SCRIPT, Files.readString(FOREIGN_BRIDGE), "the purge restores the foreign bridge");
        assertFalse(Files.exists(FOREIGN_BRIDGE.resolveSibling("bridge.distrib")), "no diverted copy is left");
        assertEquals(FOREIGN_SCRIPT, Files.readString(FOREIGN_PLUGIN), "the purge leaves a foreign plugin alone");
        assertEquals("", Sh.run("dpkg-divert", "--list", "jcni").out().strip(), "no diversion of jcni's is left");
        Sh.Run status = Sh.run("dpkg-query", "-W", "-f=${Status}", "jcni");
        assertTrue(status.rc() != 0, "dpkg still knows jcni after the purge: " + status.out());
        List<String> left = new ArrayList<>();
        for (String f : files) {
            if (!f.equals(FOREIGN_BRIDGE.toString()) && Files.exists(Path.of(f), LinkOption.NOFOLLOW_LINKS)) left.add(f);
        }
        for (String p : RUNTIME_PATHS) if (Files.exists(Path.of(p), LinkOption.NOFOLLOW_LINKS)) left.add(p);
        assertEquals(List.of(), left, "dpkg --purge left files of ours");
    }

    private String mnt;

    /** Runs cmd in the test's mount namespace (scratch /run/jcni and /var/lib/cni/jcni). */
    private Sh.Run inMnt(long timeout, Map<String, String> env, String... cmd) {
        List<String> c = new ArrayList<>(List.of("nsenter", mnt, "--"));
        c.addAll(List.of(cmd));
        return Sh.run(env, null, timeout, c.toArray(String[]::new));
    }

    private static Map<String, String> cni(String command, World w, String netns) {
        Map<String, String> env = World.cniEnv(command, "pkg-" + w.id, netns, "eth0", "/opt/cni/bin");
        // No daemon listens here: the shim runs the standalone plugin on the package's Java runtime.
        env.put("JCNI_SOCKET", w.dir.resolve("none.sock").toString());
        env.put("JCNI_AUTOSTART", "0"); // and it starts none (env -i drops surefire's setting)
        return env;
    }

    /** Runs cmd in the test's host netns, in a mount namespace without /usr/lib/jvm, with only env and PATH. */
    private Sh.Run noJava(World w, Map<String, String> env, String stdin, String... cmd) {
        List<String> c = new ArrayList<>(List.of("nsenter", mnt, "--", "unshare", "-m", "--propagation", "private", "sh", "-c", NO_JAVA, "sh",
                "ip", "netns", "exec", w.host, "env", "-i", "PATH=" + PATH));
        env.forEach((k, v) -> c.add(k + "=" + v));
        c.addAll(List.of(cmd));
        return Sh.run(null, stdin, 120, c.toArray(String[]::new));
    }
}
