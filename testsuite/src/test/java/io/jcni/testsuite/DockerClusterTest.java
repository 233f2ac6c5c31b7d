package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * A Docker network across hosts ({@code -o jcni.cluster=NAME}) in a lab of namespaces: an underlay
 * (a bridge in a namespace of its own, where a real etcd listens), two hosts plugged into it, and on
 * each a private dockerd 20.10 ({@link Dockerd}) and the installed jcnid with {@code --docker-driver}
 * and {@code --etcd-endpoints}. Each host's driver has its own name (dockerd finds drivers in the one
 * /run/docker/plugins), the cluster name ties them together.
 */
@Tag("root")
@Tag("interop")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(900)
class DockerClusterTest {
    static final String ID = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    static final String UNDERLAY = "jtu-" + ID;
    static final String CLUSTER = "cl-" + ID;
    static final String NET = "jc" + ID;
    static final String IMAGE = "jcni-bb";
    static final String ETCD_IP = "192.168.213.100";
    /** Short, so that a dead host's entries go within the test. */
    static final int LEASE_TTL = 5;
    static final String SUBNET = "10.234.0.0/16", RANGE = "10.234.1.0/24", GATEWAY = "10.234.0.1";
    static Installed jcni;
    static Path dir;
    static Process etcd;
    static final List<Host> hosts = new ArrayList<>();

    /** One host: its dockerd (and namespace), its jcnid and driver name. */
    static final class Host {
        final String name;
        final String driver;
        final Dockerd docker;
        final String underlayIp;
        Process jcnid;

        Host(String name, int n) throws Exception {
            this.name = name;
            this.driver = "jcnc" + ID + name;
            this.underlayIp = "192.168.213." + n;
            this.docker = new Dockerd("jtc-" + name + "-" + ID);
        }

        Path socket() {
            return Path.of("/run/docker/plugins/" + driver + ".sock");
        }

        Path log() {
            return docker.dir.resolve("jcnid.log");
        }

        void startJcnid() throws Exception {
            jcnid = new ProcessBuilder("nsenter", "--net=/var/run/netns/" + docker.netns, jcni.root.resolve("jcni/bin/jcnid").toString(), "start",
                    "--foreground", "--socket", docker.dir.resolve("jcnid/jcnid.sock").toString(), "--docker-driver", driver,
                    "--docker-state-dir", docker.dir.resolve("driver").toString(), "--etcd-endpoints", "http://" + ETCD_IP + ":2379",
                    "--iface", "uplink", "--docker-etcd-prefix", "/jcni-test-" + ID + "/docker", "--docker-lease-ttl", LEASE_TTL + "s",
                    "--etcd-timeout", "3s")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()))
                    .redirectInput(new File("/dev/null")).start();
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (!Sh.run("curl", "-s", "-m", "2", "--unix-socket", socket().toString(), "-X", "POST", "http://x/Plugin.Activate").out()
                    .contains("IpamDriver")) {
                if (System.nanoTime() > deadline || !jcnid.isAlive()) fail("the driver of host " + name + " did not start:\n" + Files.readString(log()));
                Dockerd.sleep(100);
            }
        }

        void stopJcnid() throws Exception {
            if (jcnid == null) return;
            jcnid.destroy();
            if (!jcnid.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) jcnid.destroyForcibly().waitFor();
            Files.deleteIfExists(socket());
        }

        String createNetwork() {
            return docker.ok("network", "create", "-d", driver, "--ipam-driver", driver, "--subnet", SUBNET, "--gateway", GATEWAY, "--ip-range", RANGE,
                    "-o", "jcni.cluster=" + CLUSTER, NET);
        }

        String run(String container) {
            docker.ok("run", "-d", "--name", container, "--network", NET, IMAGE, "sleep", "600");
            return docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", container);
        }

        Sh.Run ping(String container, String ip) {
            return docker.run("exec", container, "ping", "-c", "1", "-W", "2", ip);
        }
    }

    @BeforeAll
    static void setUp() throws Exception {
        jcni = Installed.get();
        dir = Files.createTempDirectory("jcni-cluster-");
        Sh.ok("ip", "netns", "add", UNDERLAY);
        Sh.ok("ip", "-n", UNDERLAY, "link", "set", "lo", "up");
        Sh.ok("ip", "-n", UNDERLAY, "link", "add", "sw", "type", "bridge");
        Sh.ok("ip", "-n", UNDERLAY, "addr", "add", ETCD_IP + "/24", "dev", "sw");
        Sh.ok("ip", "-n", UNDERLAY, "link", "set", "sw", "up");
        etcd = new ProcessBuilder("ip", "netns", "exec", UNDERLAY, "etcd", "--data-dir", dir.resolve("etcd").toString(), "--listen-client-urls",
                "http://" + ETCD_IP + ":2379", "--advertise-client-urls", "http://" + ETCD_IP + ":2379", "--listen-peer-urls", "http://127.0.0.1:2380")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()))
                .redirectInput(new File("/dev/null")).start();
        for (String[] h : new String[][] {{"a", "1"}, {"b", "2"}}) {
            Host host = new Host(h[0], Integer.parseInt(h[1]));
            hosts.add(host);
            String ns = host.docker.netns;
            Sh.ok("ip", "link", "add", "jtu" + h[0] + ID, "netns", UNDERLAY, "type", "veth", "peer", "uplink", "netns", ns);
            Sh.ok("ip", "-n", UNDERLAY, "link", "set", "jtu" + h[0] + ID, "master", "sw", "up");
            Sh.ok("ip", "-n", ns, "addr", "add", host.underlayIp + "/24", "dev", "uplink");
            Sh.ok("ip", "-n", ns, "link", "set", "uplink", "up");
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (etcdctl("endpoint", "health").rc() != 0) {
            if (System.nanoTime() > deadline || !etcd.isAlive()) fail("etcd did not start:\n" + Files.readString(dir.resolve("etcd.log")));
            Dockerd.sleep(200);
        }
        for (Host h : hosts) h.startJcnid();
    }

    static Sh.Run etcdctl(String... args) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", UNDERLAY, "env", "ETCDCTL_API=3", "etcdctl", "--endpoints", "http://" + ETCD_IP + ":2379"));
        c.addAll(List.of(args));
        return Sh.run(null, null, 30, c.toArray(String[]::new));
    }

    static List<String> etcdKeys() {
        return Sh.lines(etcdctl("get", "--prefix", "--keys-only", "/jcni-test-" + ID + "/").ok().out()).stream().filter(l -> !l.isBlank()).toList();
    }

    @AfterAll
    static void tearDown() throws Exception {
        List<String> left = new ArrayList<>();
        try {
            for (Host h : hosts) {
                try {
                    h.docker.close(); // containers and networks first, while the drivers still answer
                } finally {
                    h.stopJcnid();
                }
            }
            for (Host h : hosts) if (Files.exists(h.socket())) left.add(h.socket().toString());
        } finally {
            if (etcd != null) {
                etcd.destroy();
                if (!etcd.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) etcd.destroyForcibly().waitFor();
            }
            Sh.quiet("ip", "netns", "delete", UNDERLAY);
            if (dir != null) Sh.quiet("rm", "-rf", dir.toString());
        }
        assertEquals(List.of(), left);
        String ns = Sh.ok("ip", "netns", "list");
        assertFalse(ns.contains(ID), ns);
    }

    @Test
    @Order(1)
    void containersOnEveryHostReachEachOtherAcrossHosts() throws Exception {
        for (Host h : hosts) h.createNetwork();
        List<String> keys = etcdKeys();
        String p = "/jcni-test-" + ID + "/docker/clusters/" + CLUSTER + "/";
        assertTrue(keys.contains(p + "network") && keys.contains(p + "pool"), keys.toString());
        for (Host h : hosts) assertTrue(keys.contains(p + "hosts/" + h.underlayIp), keys.toString());
        // VXLAN on each host's bridge, MTU = underlay (1500) - 50, no learning, proxy ARP
        for (Host h : hosts) {
            String vx = h.docker.inHost("ip", "-d", "-o", "link", "show", "type", "vxlan").out();
            assertTrue(vx.contains("jcvx") && vx.contains("mtu 1450") && vx.contains("nolearning") && vx.contains("proxy") && vx.contains("master jc-"), vx);
        }
        String ipA = hosts.get(0).run("ca1"), ipB = hosts.get(1).run("cb1");
        assertTrue(ipA.startsWith("10.234.1.") && ipB.startsWith("10.234.1.") && !ipA.equals(ipB), ipA + " " + ipB);
        assertTrue(hosts.get(0).docker.ok("exec", "ca1", "ip", "-o", "link", "show", "eth0").contains("mtu 1450"));
        awaitPing(hosts.get(0), "ca1", ipB);
        awaitPing(hosts.get(1), "cb1", ipA);
        // A full-size packet crosses: 1450 bytes (1422 of ICMP payload) in the container, 1500 on the underlay.
        // (busybox's ping cannot set DF; that the container's MTU is 1450 is asserted above, and that the
        // underlay carries 1450 + 50 unfragmented was checked by hand with iputils' ping -M do.)
        Sh.Run full = hosts.get(0).docker.run("exec", "ca1", "ping", "-c", "1", "-W", "2", "-s", "1422", ipB);
        assertEquals(0, full.rc(), full.out() + full.err());
        // No flooding entry (00:00:00:00:00:00) on the VXLAN device: only the remote container's MAC.
        String fdb = hosts.get(0).docker.inHost("bridge", "fdb", "show", "dev", vxlanDevice(hosts.get(0))).out();
        assertFalse(fdb.contains("00:00:00:00:00:00"), fdb);
        assertTrue(fdb.contains("dst " + hosts.get(1).underlayIp), fdb);
    }

    static String vxlanDevice(Host h) {
        for (String l : Sh.lines(h.docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out())) {
            if (l.contains("jcvx")) return l.split(":")[1].strip().split("@")[0];
        }
        throw new AssertionError("no jcvx device on host " + h.name);
    }

    static void awaitPing(Host from, String container, String ip) {
        Sh.Run r = null;
        for (int i = 0; i < 40; i++) {
            r = from.ping(container, ip);
            if (r.rc() == 0) return;
            Dockerd.sleep(250);
        }
        fail("no ping from " + container + " on host " + from.name + " to " + ip + ": " + r.out() + r.err() + "\nfdb:\n"
                + from.docker.inHost("bridge", "fdb", "show").out() + "\nneigh:\n" + from.docker.inHost("ip", "neigh", "show").out());
    }

    @Test
    @Order(2)
    void concurrentRunsOnAllHostsGiveNoDuplicateAddress() throws Exception {
        int each = 6;
        ConcurrentLinkedQueue<String> ips = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (Host h : hosts) {
            for (int i = 0; i < each; i++) {
                String name = "cc" + h.name + i;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        ips.add(h.run(name));
                    } catch (AssertionError | RuntimeException e) {
                        errors.add(name + ": " + e.getMessage());
                    }
                }));
            }
        }
        for (Thread t : threads) t.join();
        assertEquals(List.of(), List.copyOf(errors));
        Set<String> distinct = new HashSet<>(ips);
        assertEquals(hosts.size() * each, ips.size());
        assertEquals(ips.size(), distinct.size(), "duplicate addresses: " + ips);
        // and one of host b's new containers answers one of host a's
        awaitPing(hosts.get(0), "cca0", hosts.get(1).docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", "ccb0"));
    }

    static String ip(Host h, String container) {
        return h.docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", container);
    }

    static boolean programs(Host on, Host remote) {
        return on.docker.inHost("bridge", "fdb", "show", "dev", vxlanDevice(on)).out().contains("dst " + remote.underlayIp);
    }

    static void await(String what, java.util.function.BooleanSupplier done) {
        for (int i = 0; i < 200; i++) {
            if (done.getAsBoolean()) return;
            Dockerd.sleep(200);
        }
        fail("not within 40 s: " + what);
    }

    @Test
    @Order(3)
    void aKilledDriverLosesNothingAndADeadHostsEntriesExpire() throws Exception {
        Host a = hosts.get(0), b = hosts.get(1);
        String ipA = ip(a, "ca1"), ipB = ip(b, "cb1");
        a.jcnid.destroyForcibly().waitFor(); // kill -9: the kernel's dataplane stays
        awaitPing(b, "cb1", ipA);
        // The lease is not renewed any more: after its TTL the other host drops host a's containers...
        await("host b drops host a's entries after the lease TTL", () -> !programs(b, a));
        assertTrue(b.ping("cb1", ipA).rc() != 0, "host a still reachable without its entries");
        // ...and host a, restarted, publishes them again: everything is back.
        Files.deleteIfExists(a.socket());
        a.startJcnid();
        await("host b programs host a's containers again", () -> programs(b, a));
        awaitPing(b, "cb1", ipA);
        awaitPing(a, "ca1", ipB);
    }

    @Test
    @Order(4)
    void withEtcdUnreachableRunningContainersKeepWorkingAndNewOnesFailClearly() throws Exception {
        Host a = hosts.get(0), b = hosts.get(1);
        String ipA = ip(a, "ca1");
        Sh.ok("kill", "-STOP", Long.toString(etcd.pid()));
        try {
            Sh.Run r = b.docker.run("run", "--rm", "--network", NET, IMAGE, "true");
            assertTrue(r.rc() != 0 && r.err().contains("etcd http://" + ETCD_IP + ":2379 unreachable"), r.out() + r.err());
            awaitPing(b, "cb1", ipA);
        } finally {
            Sh.ok("kill", "-CONT", Long.toString(etcd.pid()));
        }
        b.docker.ok("run", "--rm", "--network", NET, IMAGE, "true");
        await("host b programs host a's containers", () -> programs(b, a));
        awaitPing(b, "cb1", ipA);
    }

    @Test
    @Order(5)
    void removingTheNetworkOnOneHostLeavesTheOthersAndTheLastRemovesItFromEtcd() throws Exception {
        Host a = hosts.get(0), b = hosts.get(1);
        String ipB1 = b.docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", "ccb1");
        for (String c : Sh.lines(a.docker.ok("ps", "-aq"))) a.docker.ok("rm", "-f", c);
        a.docker.ok("network", "rm", NET);
        assertEquals("", a.docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out().strip());
        String p = "/jcni-test-" + ID + "/docker/clusters/" + CLUSTER + "/";
        List<String> keys = etcdKeys();
        assertTrue(keys.contains(p + "network"), keys.toString());
        assertFalse(keys.stream().anyMatch(k -> k.startsWith(p + "hosts/" + a.underlayIp)), keys.toString());
        awaitPing(b, "cb1", ipB1);
        // host a's containers are gone from b's VXLAN device
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (b.docker.inHost("bridge", "fdb", "show", "dev", vxlanDevice(b)).out().contains("dst " + a.underlayIp)) {
            if (System.nanoTime() > deadline) fail("host a's entries stayed on host b:\n" + b.docker.inHost("bridge", "fdb", "show").out());
            Dockerd.sleep(200);
        }
        for (String c : Sh.lines(b.docker.ok("ps", "-aq"))) b.docker.ok("rm", "-f", c);
        b.docker.ok("network", "rm", NET);
        assertEquals(List.of(), etcdKeys());
        for (Host h : hosts) {
            assertEquals("", h.docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out().strip());
            assertFalse(h.docker.inHost("ip", "-o", "link").out().contains("jc-"), h.docker.inHost("ip", "-o", "link").out());
        }
    }
}
