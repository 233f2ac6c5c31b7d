package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.Peers;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

    /** Imports {@code archive} into {@code ctd}; returns the name containerd gives it. */
    static String importImage(Containerd ctd, Path archive, String version) {
        String name = "docker.io/library/jcni:" + version;
        Sh.Run imported = ctd.ctr(300, "images", "import", archive.toString()).ok();
        assertTrue(imported.out().contains(name), imported.out());
        return name;
    }

    @Test
    void podmanLoadsTheArchiveUnderTheProjectsTag() throws IOException {
        Peers.requireExecutable(Path.of("/usr/bin/podman"), "podman");
        String name = "docker.io/library/jcni:" + version();
        try {
            Sh.Run load = Sh.run(null, null, 300, "podman", "load", "-i", image.toString()).ok();
            assertTrue(load.out().contains("Loaded image: " + name), load.out());
            String size = Sh.run("podman", "image", "inspect", "--format", "{{.Size}}", name).ok().out().strip();
            System.out.println("jcni-image: " + size + " bytes uncompressed (podman image inspect)");
            assertTrue(Long.parseLong(size) <= 120_000_000L, "image is " + size + " bytes uncompressed, the goal is 120 MB");
        } finally {
            Sh.quiet("podman", "rmi", name);
        }
    }

    @Test
    void theInstallerAndTheAgentNetworkPodsThroughTheInstalledShims() throws Exception {
        try (World w = new World(); Containerd ctd = new Containerd(w, w.dir.resolve("containerd"))) {
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
            // The directory is named by version and build (the checksum of the image's file list).
            assertTrue(Files.readSymbolicLink(node.resolve("opt/jcni")).toString().matches("jcni-" + Pattern.quote(version()) + "-[0-9a-f]{12}"),
                    Files.readSymbolicLink(node.resolve("opt/jcni")).toString());
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
            assertTrue(await(written, 30), "no conflist written; containerd log:\n" + ctd.logs());
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

    /** Waits (bounded) until {@code file} exists; false if it never does (the caller says what it shows then). */
    static boolean await(Path file, int seconds) throws Exception {
        try {
            Await.until(file + " to exist", Duration.ofSeconds(seconds), () -> Files.exists(file));
            return true;
        } catch (AssertionError e) {
            return false;
        }
    }

    /** go-cni (as containerd's CRI calls it) on {@code node}: setup or remove of pods {@code id=netns}, with the node's conflist. */
    static Sh.Run gocni(ImageNode node, Map<String, String> env, String command, String... pods) throws IOException {
        List<String> args = new ArrayList<>(List.of(GoCni.get().binary.toString(), "-confdir", node.root.resolve("etc/cni/net.d").toString(),
                "-bindir", "/opt/cni/bin", command));
        args.addAll(List.of(pods));
        return Sh.run(env, null, 300, node.onNode(args.toArray(String[]::new)).toArray(String[]::new));
    }

    /** The pod's address on the overlay network (go-cni lists loopback's first). */
    static final Pattern POD_IP = Pattern.compile("\"(10\\.244\\.[0-9]+\\.[0-9]+)\"");

    static String podIp(Sh.Run setup) {
        Matcher m = POD_IP.matcher(setup.out());
        assertTrue(m.find(), setup.out() + setup.err());
        return m.group(1);
    }

    /**
     * Two nodes as the DaemonSet makes them: on each, the init container installs the plugins, the
     * main container runs jcnid with the overlay agent exactly as the manifest starts it (its args,
     * env, ConfigMap, mounts and privileges: etcd over TLS with the Secret's client certificate), and
     * writes the ConfigMap's conflist (flannel, portmap, bandwidth) once jcnid answers. A pod on each
     * node is set up by containerd's go-cni from that conflist through the installed shims, served by
     * the containerized jcnid (the standalone plugins are out of reach: JCNI_LIBEXEC points nowhere),
     * and the two pods ping each other across the VXLAN overlay. Then both are removed without a trace.
     */
    @Test
    void twoNodesRunTheDaemonSetAndTheirPodsPingAcrossVxlan() throws Exception {
        Peers.requireExecutable(Path.of("/usr/bin/etcd"), "etcd-server");
        Peers.require(GoCni.available(), "golang-go and golang-github-containerd-go-cni-dev are not installed");
        try (World w = new World(); Containerd ctd = new Containerd(w, w.dir.resolve("containerd"))) {
            ImageCluster cluster = new ImageCluster(w);
            String name = importImage(ctd, image, version());
            List<ImageNode> nodes = List.of(cluster.node(1), cluster.node(2));
            for (int i = 0; i < 2; i++) {
                nodes.get(i).install(ctd, name, "jcni-init" + i + "-" + w.id).ok();
                nodes.get(i).startAgent(ctd, name, "jcni-node" + i + "-" + w.id).ok();
            }
            String[] subnets = new String[2];
            for (int i = 0; i < 2; i++) {
                ImageNode n = nodes.get(i);
                Path conflist = n.root.resolve("etc/cni/net.d/10-jcni.conflist");
                assertTrue(await(conflist, 90), "node " + i + ": no conflist; containerd log:\n" + ctd.logs() + "\netcd:\n" + cluster.etcdLog());
                assertEquals(n.configMap.get("cni-conf.json"), Files.readString(conflist));
                Path env = n.root.resolve("run/flannel/subnet.env");
                assertTrue(await(env, 30), "node " + i + ": no subnet.env");
                Matcher m = Pattern.compile("FLANNEL_SUBNET=(10\\.244\\.[0-9]+)\\.").matcher(Files.readString(env));
                assertTrue(m.find(), Files.readString(env));
                subnets[i] = m.group(1) + ".";
            }
            assertTrue(!subnets[0].equals(subnets[1]), "each node leases its own subnet: " + subnets[0]);
            assertTrue(cluster.etcdctl("get", "--prefix", "--keys-only", "/coreos.com/network/subnets/").ok().out().lines()
                    .filter(l -> !l.isBlank()).count() == 2, "two leases in etcd");

            Map<String, String> env = new java.util.HashMap<>(ImageNode.runtimeEnv());
            env.put("JCNI_LIBEXEC", "/nonexistent");
            String[] pods = new String[2];
            String[] ips = new String[2];
            for (int i = 0; i < 2; i++) {
                pods[i] = "pod" + i + "-" + w.id + "=" + w.container(i);
                Sh.Run setup = gocni(nodes.get(i), env, "setup", pods[i]);
                assertEquals(0, setup.rc(), setup.out() + setup.err());
                ips[i] = podIp(setup);
                assertTrue(ips[i].startsWith(subnets[i]), ips[i] + " is in node " + i + "'s subnet " + subnets[i]);
            }
            for (int i = 0; i < 2; i++) {
                String from = w.name("c" + i), to = ips[1 - i];
                Await.until("the pod on node " + i + " pinging " + to + " across the overlay", Duration.ofSeconds(30),
                        () -> World.in(from, "ping", "-c1", "-W1", to).rc() == 0);
            }
            System.out.println("jcni-image: pods " + ips[0] + " (node 1) and " + ips[1] + " (node 2) ping each other over VXLAN");

            for (int i = 0; i < 2; i++) {
                Sh.Run remove = gocni(nodes.get(i), env, "remove", pods[i]);
                assertEquals(0, remove.rc(), remove.out() + remove.err());
                assertNoStateOf(nodes.get(i), "pod" + i + "-" + w.id);
            }
        }
    }

    /** Nothing under the node's /var/lib/cni names the pod (host-local's address, flannel's delegate config, the result cache). */
    static void assertNoStateOf(ImageNode node, String podId) throws IOException {
        try (var files = Files.walk(node.root.resolve("var/lib/cni"))) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                assertTrue(!f.getFileName().toString().contains(podId) && !Files.readString(f, java.nio.charset.StandardCharsets.ISO_8859_1).contains(podId),
                        f + " still names " + podId);
            }
        }
    }

    /**
     * A rolling update N -> N+1 on a node while 20 pods are being created: the node runs version N
     * (init container, then jcnid with the overlay, as the DaemonSet does); 20 go-cni setups start one
     * after another, each through the shims, while the DaemonSet's update happens on the node: the old
     * pod stops (jcnid drains), N+1's init container installs (a new /opt/jcni and new shims, swapped by
     * renames), N+1's jcnid starts. Calls meanwhile go to jcnid N, to the standalone plugins (the gap)
     * or to jcnid N+1. All 20 must succeed, with addresses; every read of a shim while the installer
     * replaces it is the whole of N's or of N+1's, and /opt/jcni always leads to a complete version;
     * after removing the 20 pods nothing of them is left on the node.
     */
    @Test
    void anUpgradeFromNToNPlus1While20PodsAreAddedLosesNone() throws Exception {
        Peers.requireExecutable(Path.of("/usr/bin/etcd"), "etcd-server");
        Peers.require(GoCni.available(), "golang-go and golang-github-containerd-go-cni-dev are not installed");
        String next = version() + ".next";
        try (World w = new World(); Containerd ctd = new Containerd(w, w.dir.resolve("containerd"))) {
            ImageCluster cluster = new ImageCluster(w);
            Path bumped = BumpedImage.make(image, next, Files.createDirectories(w.dir.resolve("image-next")));
            String n0 = importImage(ctd, image, version());
            String n1 = importImage(ctd, bumped, next);
            ImageNode node = cluster.node(1);
            node.install(ctd, n0, "jcni-init-n-" + w.id).ok();
            String agent0 = "jcni-node-n-" + w.id;
            node.startAgent(ctd, n0, agent0).ok();
            assertTrue(await(node.root.resolve("etc/cni/net.d/10-jcni.conflist"), 90), "no conflist; containerd log:\n" + ctd.logs());
            assertTrue(await(node.root.resolve("run/flannel/subnet.env"), 30), "no subnet.env");

            // The shims of N and N+1, byte for byte: whatever a reader sees must be one of them, whole.
            Path shim = node.bin().resolve("flannel");
            byte[] oldShim = Files.readAllBytes(shim);
            byte[] newShim = java.util.Arrays.copyOf(oldShim, oldShim.length + BumpedImage.marker(next).length);
            System.arraycopy(BumpedImage.marker(next), 0, newShim, oldShim.length, BumpedImage.marker(next).length);
            String oldSum = BumpedImage.sha256(oldShim), newSum = BumpedImage.sha256(newShim);
            java.util.concurrent.atomic.AtomicBoolean upgrading = new java.util.concurrent.atomic.AtomicBoolean(true);
            List<String> torn = java.util.Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
            Thread reader = Thread.ofPlatform().start(() -> {
                while (upgrading.get()) {
                    for (String t : List.of("flannel", "bridge", "host-local", "portmap", "bandwidth", "loopback")) {
                        try {
                            String sum = BumpedImage.sha256(Files.readAllBytes(node.bin().resolve(t)));
                            if (!sum.equals(oldSum) && !sum.equals(newSum)) torn.add(t + " had " + sum);
                            if (!Files.isExecutable(node.root.resolve("opt/jcni/libexec").resolve(t))) torn.add("/opt/jcni/libexec/" + t + " missing");
                            reads.incrementAndGet();
                        } catch (IOException e) {
                            torn.add(t + ": " + e);
                        }
                    }
                }
            });

            // 20 pods, each by its own go-cni (as kubelet starts pods one by one), in four groups of five, each
            // started while one step of the DaemonSet's rolling update happens on the node: before it (jcnid N
            // serves), once N's pod has stopped (the standalone plugins), while N+1's init container installs
            // (shims and /opt/jcni replaced under the calls), once N+1's jcnid runs.
            int count = 20;
            List<String> pods = new ArrayList<>();
            for (int i = 0; i < count; i++) pods.add("up" + i + "-" + w.id + "=" + w.container(i));
            List<java.util.concurrent.Future<Sh.Run>> setups = new ArrayList<>();
            long t0 = System.nanoTime();
            try (var pool = java.util.concurrent.Executors.newFixedThreadPool(count + 1)) {
                java.util.function.IntConsumer group = g -> {
                    for (int k = g * 5; k < g * 5 + 5; k++) {
                        int pod = k;
                        setups.add(pool.submit(() -> gocni(node, ImageNode.runtimeEnv(), "setup", pods.get(pod))));
                        Await.pause(150);
                    }
                };
                group.accept(0);
                ctd.stop(agent0);
                long stopped = System.nanoTime();
                group.accept(1);
                var installing = pool.submit(() -> node.install(ctd, n1, "jcni-init-n1-" + w.id));
                group.accept(2);
                Sh.Run install = installing.get(5, java.util.concurrent.TimeUnit.MINUTES).ok();
                long installed = System.nanoTime();
                node.startAgent(ctd, n1, "jcni-node-n1-" + w.id).ok();
                Await.until("N+1's jcnid answering", Duration.ofSeconds(60),
                        () -> Sh.run(node.onNode("/opt/jcni/bin/jcnid", "status").toArray(String[]::new)).rc() == 0);
                group.accept(3);
                System.out.printf("jcni-image upgrade: old jcnid stopped at %d ms, N+1 installed at %d ms, N+1 agent answering at %d ms; installer: %s%n",
                        (stopped - t0) / 1_000_000, (installed - t0) / 1_000_000, (System.nanoTime() - t0) / 1_000_000,
                        install.err().strip().replace('\n', ';'));
                List<String> ips = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    Sh.Run r = setups.get(i).get(5, java.util.concurrent.TimeUnit.MINUTES);
                    assertEquals(0, r.rc(), "pod " + i + ": " + r.out() + r.err());
                    ips.add(podIp(r));
                }
                assertEquals(count, new java.util.HashSet<>(ips).size(), "20 distinct addresses: " + ips);
                System.out.printf("jcni-image upgrade: all %d setups succeeded by %d ms%n", count, (System.nanoTime() - t0) / 1_000_000);
            } finally {
                upgrading.set(false);
                reader.join(30_000);
            }
            assertTrue(torn.isEmpty(), "a reader saw a half-written or missing file during the upgrade: " + torn);
            assertTrue(reads.get() > 0);

            // N+1 is in place: the link, its shims, its marker; N's directory kept (a plugin may still run from it); no temporary files.
            String link = Files.readSymbolicLink(node.root.resolve("opt/jcni")).toString();
            assertTrue(link.startsWith("jcni-" + next + "-"), link);
            assertEquals(next, Files.readString(node.root.resolve("opt/jcni/share/image-version")).strip());
            for (String t : List.of("flannel", "bridge", "host-local", "portmap", "bandwidth", "loopback")) {
                assertArrayEquals(newShim, Files.readAllBytes(node.bin().resolve(t)), t + " is N+1's shim");
            }
            try (var opt = Files.list(node.root.resolve("opt")); var bin = Files.list(node.bin())) {
                List<String> names = java.util.stream.Stream.concat(opt, bin).map(p -> p.getFileName().toString()).toList();
                assertTrue(names.stream().noneMatch(n -> n.startsWith(".")), "temporary files left: " + names);
                assertEquals(2, names.stream().filter(n -> n.startsWith("jcni-")).count(), "N and N+1: " + names);
            }

            // Remove the 20 (through N+1's jcnid): nothing of them stays.
            Sh.Run remove = gocni(node, ImageNode.runtimeEnv(), "remove", pods.toArray(String[]::new));
            assertEquals(0, remove.rc(), remove.out() + remove.err());
            for (int i = 0; i < count; i++) assertNoStateOf(node, "up" + i + "-" + w.id);
            // DEL retires the pair and jcnid deletes it a moment after answering (testkit RetiredLinks).
            io.jcni.testkit.RetiredLinks.awaitNone(node.netns);
            List<String> veths = Sh.run("ip", "-n", node.netns, "-o", "link", "show", "type", "veth").ok().out().lines()
                    .filter(l -> !l.contains(" eth0@")).toList();
            StringBuilder inPods = new StringBuilder();
            for (String v : veths) {
                Matcher m = Pattern.compile("link-netns ([^\\s\\\\]+)").matcher(v);
                if (m.find()) inPods.append('\n').append(m.group(1)).append(": ").append(Sh.run("ip", "-n", m.group(1), "-d", "link").out());
            }
            assertTrue(veths.isEmpty(), "pods' veths left on the node (eth0 is its underlay): " + veths + inPods);
        }
    }
}
