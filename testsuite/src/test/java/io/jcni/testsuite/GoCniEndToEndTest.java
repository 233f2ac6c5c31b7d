package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testfixtures.Peers;
import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * containerd's way of calling CNI (go-cni 1.1.7, as containerd 1.6's CRI uses it) against the
 * installed jcni: a conflist like containerd's default (bridge + host-local, portmap, bandwidth),
 * pods with a hostPort and the kubernetes.io bandwidth annotations, in a private host namespace.
 * go-cni sends capability args with Go's untagged field names and a burst of 4294967295 bits. The
 * reference plugins (/usr/lib/cni) under the same calls give the baseline the qdiscs are compared with.
 */
@Tag("root")
@Tag("interop")
class GoCniEndToEndTest {
    static final String RATE_IN = "10Mbit";
    static final String RATE_OUT = "5Mbit";
    static Installed jcni;
    static GoCni gocni;

    @BeforeAll
    static void setUp() throws Exception {
        Peers.require(GoCni.available(), "golang-go and golang-github-containerd-go-cni-dev are not installed");
        jcni = Installed.get();
        gocni = GoCni.get();
    }

    /** One network in one private world: its conflist, its bridge, its subnet and state directories. */
    record Net(World w, String name, String bridge, String subnetPrefix, Path confDir, int hostPort) {
        static Net create(World w) throws Exception {
            int n = Integer.parseInt(w.id.substring(0, 4), 16);
            Net net = new Net(w, "ctrd" + w.id, "cni" + w.id.substring(0, 8), "10.89." + (n % 250) + ".",
                    w.dir.resolve("net.d"), 20000 + n % 10000);
            Files.createDirectories(net.confDir);
            // containerd's default 10-containerd-net.conflist, with this world's names and directories.
            Files.writeString(net.confDir.resolve("10-containerd-net.conflist"), """
                    {"cniVersion":"1.0.0","name":"%s","plugins":[
                      {"type":"bridge","bridge":"%s","isGateway":true,"ipMasq":true,"promiscMode":true,"dataDir":"%s",
                       "ipam":{"type":"host-local","ranges":[[{"subnet":"%s0/24"}]],"routes":[{"dst":"0.0.0.0/0"}],"dataDir":"%s"}},
                      {"type":"portmap","capabilities":{"portMappings":true},"dataDir":"%s"},
                      {"type":"bandwidth","capabilities":{"bandwidth":true}}]}
                    """.formatted(net.name, net.bridge, w.dir.resolve("nft"), net.subnetPrefix, w.dir.resolve("ipam"), w.dir.resolve("nft")));
            return net;
        }

        Sh.Run call(String command, List<String> pods) {
            return call(jcni.bin, command, pods);
        }

        Sh.Run call(Path binDir, String command, List<String> pods) {
            List<String> flags = List.of("-hostport", Integer.toString(hostPort), "-containerport", "80",
                    "-ingress", "10000000", "-egress", "5000000");
            return gocni.run(w, confDir, binDir, flags, command, pods);
        }

        /** setup; returns each pod's IPv4 address on eth0, in order. */
        List<String> setup(List<String> pods) {
            return setup(jcni.bin, pods);
        }

        List<String> setup(Path binDir, List<String> pods) {
            Sh.Run r = call(binDir, "setup", pods);
            assertEquals(0, r.rc(), "go-cni Setup failed: " + r.err());
            List<String> ips = new ArrayList<>();
            for (String line : Sh.lines(r.out())) {
                Map<String, Object> pod = Json.parseObject(line);
                String ip = Json.asList(pod.get("ips")).stream().map(String::valueOf).filter(a -> a.startsWith(subnetPrefix))
                        .findFirst().orElseThrow(() -> new AssertionError("no address in " + subnetPrefix + "0/24: " + line));
                ips.add(ip);
            }
            assertEquals(pods.size(), ips.size(), r.out());
            return ips;
        }

        String host(String... cmd) {
            return w.inHost(null, null, cmd).ok().out();
        }

        List<String> allocations() throws Exception {
            Path dir = w.dir.resolve("ipam").resolve(name);
            if (!Files.isDirectory(dir)) return List.of();
            try (Stream<Path> s = Files.list(dir)) {
                return s.map(p -> p.getFileName().toString()).filter(f -> !f.equals("lock") && !f.startsWith("last_reserved_ip")).sorted().toList();
            }
        }

        String nftTable() {
            Sh.Run r = w.inHost(null, null, "nft", "list", "table", "inet", "jcni");
            return r.rc() == 0 ? r.out() : "";
        }

        /** Nothing of the pod is left: veth, address, nft element, ifb, cached result. */
        void assertClean(String podId, String ip) throws Exception {
            RetiredLinks.awaitNone(w.host); // DEL retires the veth and ifb; they are deleted right after
            assertEquals("", host("ip", "-o", "link", "show", "type", "veth").strip(), "no veth left");
            assertEquals("", host("ip", "-o", "link", "show", "type", "ifb").strip(), "no ifb left");
            assertEquals(List.of(), allocations(), "no address left reserved");
            String nft = nftTable();
            assertFalse(nft.contains(ip + " ") || nft.contains(ip + ",") || nft.contains(podId + " eth0"), "no nft element left:\n" + nft);
            try (Stream<Path> s = Files.exists(Path.of("/var/lib/cni/results")) ? Files.list(Path.of("/var/lib/cni/results")) : Stream.empty()) {
                assertEquals(List.of(), s.filter(p -> p.getFileName().toString().startsWith(name + "-")).toList(), "no cached result");
            }
        }
    }

    @Test
    void hostPortAnswersBandwidthIsShapedAndRemoveLeavesNothing() throws Exception {
        try (World w = new World()) {
            Net net = Net.create(w);
            String podNs = w.container(0);
            String pod = "pod" + w.id;
            String ip = net.setup(List.of(pod + "=" + podNs)).getFirst();
            assertEquals(shapingOf(net, pod), referenceShaping(), "the reference plugins' qdiscs under the same runtime");

            Path www = w.dir.resolve("www");
            Files.createDirectories(www);
            Files.writeString(www.resolve("index.html"), "hello from " + pod + "\n");
            Process httpd = new ProcessBuilder("ip", "netns", "exec", Path.of(podNs).getFileName().toString(),
                    "busybox", "httpd", "-f", "-p", "80", "-h", www.toString()).start();
            try {
                String gateway = net.subnetPrefix + "1";
                for (String target : List.of("127.0.0.1", gateway)) {
                    assertEquals("hello from " + pod + "\n", curl(w, target, net.hostPort), "hostPort on " + target);
                }
            } finally {
                httpd.destroy();
                httpd.waitFor();
            }

            String veth = net.host("ip", "-o", "link", "show", "master", net.bridge).lines()
                    .map(l -> l.split(":")[1].strip().split("@")[0]).findFirst().orElseThrow();
            String vethTbf = net.host("tc", "qdisc", "show", "dev", veth, "root");
            // containerd's burst of 4294967295 bits, wrapped exactly as the Go plugin wraps it
            assertTrue(vethTbf.contains("tbf") && vethTbf.contains("rate " + RATE_IN + " burst 193273526b lat 275s"), vethTbf);
            String ifb = ifbName(net.name, pod);
            String ifbTbf = net.host("tc", "qdisc", "show", "dev", ifb, "root");
            assertTrue(ifbTbf.contains("tbf") && ifbTbf.contains("rate " + RATE_OUT + " "), ifbTbf);
            assertTrue(net.host("tc", "filter", "show", "dev", veth, "parent", "ffff:").contains(ifb), "egress redirected to the ifb");
            assertTrue(net.nftTable().contains(ip), "port mapping element for " + ip);

            Sh.Run rm = net.call("remove", List.of(pod + "=" + podNs));
            assertEquals(0, rm.rc(), "go-cni Remove failed: " + rm.err());
            net.assertClean(pod, ip);
            assertNotEquals(0, w.inHost(null, null, "curl", "-s", "--max-time", "2", "http://127.0.0.1:" + net.hostPort + "/").rc(),
                    "nothing answers after Remove");
        }
    }

    /** containerd removes a pod whose netns is already gone with an empty netns path; that must succeed and clean up. */
    @Test
    void removeAfterThePodNetnsIsGoneSucceeds() throws Exception {
        try (World w = new World()) {
            Net net = Net.create(w);
            String podNs = w.container(0);
            String pod = "gone" + w.id;
            String ip = net.setup(List.of(pod + "=" + podNs)).getFirst();
            Sh.run("ip", "netns", "del", Path.of(podNs).getFileName().toString()).ok();

            Sh.Run rm = net.call("remove", List.of(pod + "="));
            assertEquals(0, rm.rc(), "go-cni Remove failed: " + rm.err());
            net.assertClean(pod, ip);
            // and a second Remove, as containerd retries, still succeeds
            assertEquals(0, net.call("remove", List.of(pod + "=")).rc());
        }
    }

    @Test
    void severalPodsSetUpAndRemovedInParallel() throws Exception {
        int n = 4;
        try (World w = new World()) {
            Net net = Net.create(w);
            List<String> pods = new ArrayList<>();
            for (int i = 0; i < n; i++) pods.add("par" + i + w.id + "=" + w.container(i));
            List<String> ips = net.setup(pods);
            assertEquals(n, ips.stream().distinct().count(), "distinct addresses: " + ips);
            assertEquals(n, net.allocations().size());
            String nft = net.nftTable();
            for (int i = 0; i < n; i++) {
                assertTrue(nft.contains("tcp . " + (net.hostPort + i) + " "), "mapping of host port " + (net.hostPort + i) + ":\n" + nft);
            }
            assertEquals(n, net.host("ip", "-o", "link", "show", "type", "ifb").lines().count());

            Sh.Run rm = net.call("remove", pods);
            assertEquals(0, rm.rc(), "go-cni Remove failed: " + rm.err());
            for (int i = 0; i < n; i++) net.assertClean(pods.get(i).split("=")[0], ips.get(i));
        }
    }

    /**
     * Two pods publishing one host port, set up one after the other as containerd does: the first
     * keeps the port (as the reference portmap); Remove of the second leaves the first reachable,
     * Remove of the first hands the port to the second.
     */
    @Test
    void twoPodsOnOneHostPortTheFirstKeepsItAndARemoveLeavesTheOther() throws Exception {
        twoPodsOnOneHostPort(jcni.bin);
    }

    /** The same calls to the reference plugins (/usr/lib/cni, portmap 1.1.1 on iptables): the behaviour jcni keeps. */
    @Test
    void theReferencePluginsShareAHostPortTheSameWay() throws Exception {
        Peers.requireExecutable(Path.of("/usr/lib/cni/portmap"), "containernetworking-plugins");
        twoPodsOnOneHostPort(Path.of("/usr/lib/cni"));
    }

    private static void twoPodsOnOneHostPort(Path binDir) throws Exception {
        try (World w = new World()) {
            Net net = Net.create(w);
            String first = "first" + w.id + "=" + w.container(0);
            String second = "second" + w.id + "=" + w.container(1);
            net.setup(binDir, List.of(first));
            net.setup(binDir, List.of(second));
            List<Process> servers = new ArrayList<>();
            try {
                for (String pod : List.of(first, second)) servers.add(httpd(w, pod));
                String gateway = net.subnetPrefix + "1";
                assertEquals(page(first), curl(w, gateway, net.hostPort), "the first pod keeps the port");

                assertEquals(0, net.call(binDir, "remove", List.of(second)).rc());
                assertEquals(page(first), curl(w, gateway, net.hostPort), "Remove of the second leaves the first");
                net.setup(binDir, List.of(second));
                assertEquals(page(first), curl(w, gateway, net.hostPort), "a second setup of the second changes nothing");

                assertEquals(0, net.call(binDir, "remove", List.of(first)).rc());
                assertEquals(page(second), curl(w, gateway, net.hostPort), "Remove of the first hands the port on");
                assertEquals(0, net.call(binDir, "remove", List.of(second)).rc());
                assertFalse(net.nftTable().contains("tcp . " + net.hostPort + " "), net.nftTable());
            } finally {
                for (Process p : servers) {
                    p.destroy();
                    p.waitFor();
                }
            }
        }
    }

    private static String page(String pod) {
        return "hello from " + pod.split("=")[0] + "\n";
    }

    /** busybox httpd on port 80 in the pod's namespace, answering {@link #page}. */
    private static Process httpd(World w, String pod) throws Exception {
        Path www = w.dir.resolve("www-" + pod.split("=")[0]);
        Files.createDirectories(www);
        Files.writeString(www.resolve("index.html"), page(pod));
        return new ProcessBuilder("ip", "netns", "exec", Path.of(pod.split("=")[1]).getFileName().toString(),
                "busybox", "httpd", "-f", "-p", "80", "-h", www.toString()).start();
    }

    private static String reference;

    /** What the reference plugins (/usr/lib/cni) do under the same go-cni calls, once per run. */
    private static synchronized String referenceShaping() throws Exception {
        if (reference != null) return reference;
        Peers.requireExecutable(Path.of("/usr/lib/cni/bandwidth"), "containernetworking-plugins");
        try (World w = new World()) {
            Net net = Net.create(w);
            String pod = "ref" + w.id;
            String podNs = w.container(0);
            net.setup(Path.of("/usr/lib/cni"), List.of(pod + "=" + podNs));
            reference = shapingOf(net, pod);
            Sh.Run rm = net.call(Path.of("/usr/lib/cni"), "remove", List.of(pod + "=" + podNs));
            assertEquals(0, rm.rc(), "reference Remove: " + rm.err());
        }
        return reference;
    }

    /** The root qdiscs of the pod's host veth and of its ifb, without device names. */
    private static String shapingOf(Net net, String pod) {
        String veth = net.host("ip", "-o", "link", "show", "master", net.bridge).lines()
                .map(l -> l.split(":")[1].strip().split("@")[0]).findFirst().orElseThrow();
        return (net.host("tc", "qdisc", "show", "dev", veth, "root") + net.host("tc", "qdisc", "show", "dev", ifbName(net.name, pod), "root"))
                .replaceAll("dev \\S+ ", "");
    }

    private static String curl(World w, String ip, int port) throws InterruptedException {
        String answer = "";
        for (int i = 0; i < 50 && !answer.contains("hello"); i++) {
            answer = w.inHost(null, null, "curl", "-s", "--max-time", "2", "http://" + ip + ":" + port + "/").out();
            if (!answer.contains("hello")) Thread.sleep(100);
        }
        return answer;
    }

    /** The bandwidth plugin's ifb name (the Go plugin's): "bwp" + sha512(network + container ID), 15 characters. */
    private static String ifbName(String network, String containerId) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-512").digest((network + containerId).getBytes(StandardCharsets.UTF_8));
            return ("bwp" + HexFormat.of().formatHex(h)).substring(0, 15);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
