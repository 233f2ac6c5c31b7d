package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Peers;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes node image (scripts/image.sh) the way the DaemonSet in deploy/kubernetes/jcni.yaml
 * uses it, without Kubernetes: Debian's containerd imports it, {@code ctr run} runs the init
 * container (jcni-install-cni) and the main container (jcni-node, jcnid) with the manifest's mounts
 * onto a scratch node root, and pods are networked through the installed shims by the containerized
 * jcnid. The agent runs without the overlay here (jcnid serving plugins only).
 *
 * <p>One difference from the DaemonSet: {@code ctr run --with-ns pid:...} (hostPID) fails in runc on
 * this machine ("can't get final child's PID from pipe"), so the main container gets the host's /proc
 * bind-mounted over its own, which is what hostPID gives jcnid: the callers' /proc/PID/ns/net.
 */
@Tag("root")
@Tag("interop")
class ImageEndToEndTest {
    static final Path REPO = PackageTest.REPO;
    static Path image;
    static Path imageDir;

    @BeforeAll
    static void buildImage() throws IOException {
        Peers.requireExecutable(Path.of("/usr/bin/containerd"), "containerd");
        Peers.requireExecutable(Path.of("/usr/bin/ctr"), "containerd");
        String given = System.getProperty("jcni.image");
        if (given != null && !given.isBlank()) {
            image = Path.of(given);
            return;
        }
        imageDir = Files.createTempDirectory("jcni-image-");
        String out = Sh.run(null, null, 600, REPO.resolve("scripts/image.sh").toString(), "--no-build", "--out", imageDir.toString())
                .ok().out().strip();
        image = Path.of(out.split(" ")[0]);
        if (!image.isAbsolute()) image = REPO.resolve(image);
    }

    @AfterAll
    static void removeImage() {
        if (imageDir != null) Sh.quiet("rm", "-rf", imageDir.toString());
    }

    static String version() throws IOException {
        Matcher m = Pattern.compile("<version>([^<]+)</version>").matcher(Files.readString(REPO.resolve("pom.xml")));
        assertTrue(m.find());
        return m.group(1);
    }

    @Test
    void podmanLoadsTheArchiveUnderTheProjectsTag() throws IOException {
        Peers.requireExecutable(Path.of("/usr/bin/podman"), "podman");
        String name = "docker.io/library/jcni:" + version();
        try {
            Sh.Run load = Sh.run(null, null, 300, "podman", "load", "-i", image.toString()).ok();
            assertTrue(load.out().contains("Loaded image: " + name), load.out());
            String size = Sh.run("podman", "image", "inspect", "--format", "{{.Size}}", name).ok().out().strip();
            assertTrue(Long.parseLong(size) <= 120_000_000L, "image is " + size + " bytes uncompressed, the goal is 120 MB");
        } finally {
            Sh.quiet("podman", "rmi", name);
        }
    }

    @Test
    void theInstallerAndTheAgentNetworkPodsThroughTheInstalledShims() throws Exception {
        try (World w = new World(); Containerd ctd = new Containerd(w.host, w.dir.resolve("containerd"))) {
            String name = "docker.io/library/jcni:" + version();
            Sh.Run imported = ctd.ctr(300, "images", "import", image.toString()).ok();
            assertTrue(imported.out().contains(name), imported.out());

            Path node = w.dir.resolve("node");
            Path bin = node.resolve("opt/cni/bin");
            for (String d : List.of("opt/cni/bin", "etc/cni/net.d", "run/jcni", "var/lib/cni")) Files.createDirectories(node.resolve(d));
            // Another vendor's plugin under a name jcni has too: the installer must leave it alone.
            byte[] foreign = "#!/bin/sh\necho another vendor's bridge\n".getBytes();
            Files.write(bin.resolve("bridge"), foreign);
            Sh.ok("chmod", "0755", bin.resolve("bridge").toString());

            // The init container, twice: the second run (a restarted pod) changes nothing.
            List<String> initMounts = List.of("--net-host", "--mount", Containerd.bind(node, "/host", true));
            Sh.Run first = ctd.run(false, initMounts, name, "jcni-init-" + w.id, "/opt/jcni/bin/jcni-install-cni").ok();
            assertTrue(first.err().contains("left alone") && first.err().contains("bridge"), first.err());
            assertEquals("jcni-" + version(), Files.readSymbolicLink(node.resolve("opt/jcni")).toString());
            assertArrayEquals(foreign, Files.readAllBytes(bin.resolve("bridge")));
            for (String type : List.of("ptp", "host-local", "flannel", "portmap", "bandwidth", "loopback")) {
                assertTrue(Files.isExecutable(bin.resolve(type)), type);
            }
            long ptpTime = Files.getLastModifiedTime(bin.resolve("ptp")).toMillis();
            Sh.Run second = ctd.run(false, initMounts, name, "jcni-init2-" + w.id, "/opt/jcni/bin/jcni-install-cni").ok();
            assertTrue(second.err().contains("already in place") && second.err().contains("0 installed"), second.err());
            assertEquals(ptpTime, Files.getLastModifiedTime(bin.resolve("ptp")).toMillis());
            assertArrayEquals(foreign, Files.readAllBytes(bin.resolve("bridge")));
            try (var left = Files.list(bin)) {
                assertTrue(left.noneMatch(p -> p.getFileName().toString().startsWith(".")), "temporary files left in " + bin);
            }

            // The main container: jcnid, then the conflist, with the DaemonSet's mounts.
            Path conf = w.dir.resolve("kube-jcni");
            Files.createDirectories(conf);
            String conflist = """
                    {"cniVersion":"1.0.0","name":"podnet-%s","plugins":[{"type":"ptp","ipMasq":false,
                     "ipam":{"type":"host-local","ranges":[[{"subnet":"10.94.7.0/24"}]]}}]}
                    """.formatted(w.id);
            Files.writeString(conf.resolve("cni-conf.json"), conflist);
            List<String> agent = new ArrayList<>(List.of("--net-host", "--privileged",
                    "--mount", Containerd.bind(Path.of("/proc"), "/proc", true),
                    "--mount", Containerd.bind(node, "/host", true),
                    "--mount", Containerd.bind(node.resolve("run/jcni"), "/run/jcni", true),
                    "--mount", Containerd.bind(node.resolve("var/lib/cni"), "/var/lib/cni", true),
                    "--mount", Containerd.bind(bin, bin.toString(), false),
                    "--mount", Containerd.bind(Path.of("/var/run/netns"), "/var/run/netns", true),
                    "--mount", Containerd.bind(conf, "/etc/kube-jcni", false)));
            Path written = node.resolve("etc/cni/net.d/10-jcni.conflist");
            long started = System.nanoTime();
            ctd.run(true, agent, name, "jcni-node-" + w.id, "/opt/jcni/bin/jcni-node").ok();
            for (int i = 0; i < 600 && !Files.exists(written); i++) Thread.sleep(50);
            assertTrue(Files.exists(written), "no conflist written; containerd log:\n" + ctd.logs());
            System.out.printf("jcni-image: container start to conflist written: %d ms%n", (System.nanoTime() - started) / 1_000_000);
            assertEquals(conflist, Files.readString(written));
            assertTrue(Files.exists(node.resolve("run/jcni/jcnid.sock")));

            // A pod through the installed shim. JCNI_LIBEXEC points nowhere: only jcnid can answer.
            String pod = w.container(1);
            String netconf = "{\"cniVersion\":\"1.0.0\",\"name\":\"podnet-" + w.id + "\",\"type\":\"ptp\",\"ipMasq\":false,"
                    + "\"ipam\":{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\"10.94.7.0/24\"}]]}}";
            Map<String, String> env = new java.util.HashMap<>(World.cniEnv("ADD", "pod1-" + w.id, pod, "eth0", bin.toString()));
            env.put("JCNI_SOCKET", node.resolve("run/jcni/jcnid.sock").toString());
            env.put("JCNI_LIBEXEC", "/nonexistent");
            Sh.Run add = w.inHost(env, netconf, bin.resolve("ptp").toString());
            assertEquals(0, add.rc(), add.out() + add.err());
            assertTrue(add.out().contains("10.94.7."), add.out());
            assertTrue(Sh.run("ip", "-n", pod.substring(pod.lastIndexOf('/') + 1), "-4", "addr", "show", "eth0").ok().out().contains("10.94.7."));
            // host-local's state is the node's (the container's /var/lib/cni is the node's).
            try (var leases = Files.list(node.resolve("var/lib/cni/networks/podnet-" + w.id))) {
                assertTrue(leases.anyMatch(p -> p.getFileName().toString().startsWith("10.94.7.")));
            }
            // The foreign bridge was never called: jcnid ran ptp in-process.
            String podName = pod.substring(pod.lastIndexOf('/') + 1);

            // Deleting the DaemonSet: the agent stops; the pod keeps its interface and address.
            ctd.stop("jcni-node-" + w.id);
            assertTrue(Sh.run("ip", "-n", podName, "-4", "addr", "show", "eth0").ok().out().contains("10.94.7."));
            assertTrue(Files.exists(written), "the conflist stays when jcnid stops");
        }
    }
}
