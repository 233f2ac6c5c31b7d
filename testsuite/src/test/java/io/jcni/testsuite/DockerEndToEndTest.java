package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testkit.Sh;
import io.jcni.testkit.Installed;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Docker 20.10 with jcni as its network and IPAM driver: a private dockerd in its own network
 * namespace ({@link Dockerd}) and the installed jcnid started there with {@code --docker-driver}
 * ({@link Dockerd#startDriver}). The driver's socket has to be where dockerd looks, /run/docker/plugins
 * (dockerd has no option to look elsewhere), under a unique name; it is removed afterwards.
 */
@Tag("root")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(600)
@Tag("interop")
class DockerEndToEndTest {
    static final String ID = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    static final String DRIVER = "jcnit" + ID;
    static final Path SOCKET = Dockerd.pluginSocket(DRIVER);
    static final String IMAGE = "jcni-bb";
    static Installed jcni;
    static Dockerd docker;
    static JcnidProcess jcnid;
    static Path state;

    @BeforeAll
    static void setUp() throws Exception {
        jcni = Installed.get();
        docker = new Dockerd("jtd-h-" + ID);
        state = docker.dir.resolve("driver");
        jcnid = docker.startDriver(jcni, DRIVER, "--docker-state-dir", state.toString());
    }

    static String log() {
        return jcnid.log();
    }

    @AfterAll
    static void tearDown() throws Exception {
        // Containers and networks first, while the driver still answers; then dockerd, jcnid, its socket and the namespace.
        if (docker != null) docker.close();
        assertFalse(Files.exists(SOCKET));
        assertFalse(Sh.ok("ip", "netns", "list").contains("jtd-h-" + ID));
    }

    static String ip(String container, String network) {
        return docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + network + "\").IPAddress}}", container);
    }

    static String exec(String container, String sh) {
        return docker.ok("exec", container, "sh", "-c", sh);
    }

    static final String WEB = "mkdir -p /www && echo hello-from-jcni > /www/index.html && exec httpd -f -p 80 -h /www";

    static String get(String hostPort) {
        return "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + hostPort.replace(':', ' ');
    }

    @Test
    @Order(1)
    void jcniIpamSubnetRangeGatewayAndFixedAddress() {
        String net = "ja" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.231.0.0/16", "--ip-range", "10.231.7.0/24",
                "--gateway", "10.231.0.1", net);
        String inspect = docker.ok("network", "inspect", net, "-f", "{{.Driver}} {{.IPAM.Driver}} {{range .IPAM.Config}}{{.Subnet}} {{.IPRange}} {{.Gateway}}{{end}}");
        assertEquals(DRIVER + " " + DRIVER + " 10.231.0.0/16 10.231.7.0/24 10.231.0.1", inspect);
        String auto = docker.ok("run", "--rm", "--network", net, IMAGE, "sh", "-c", "ip -4 -o addr show eth0; ip route");
        assertTrue(auto.contains("inet 10.231.7.1/16"), auto);
        assertTrue(auto.contains("default via 10.231.0.1 dev eth0"), auto);
        String fixed = docker.ok("run", "--rm", "--network", net, "--ip", "10.231.200.9", IMAGE, "ip", "-4", "-o", "addr", "show", "eth0");
        assertTrue(fixed.contains("inet 10.231.200.9/16"), fixed);
        assertTrue(docker.run("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.231.5.0/24", net + "x").err()
                .contains("overlaps"));
        docker.ok("network", "rm", net);
        assertEquals("", docker.inHost("ip", "-o", "link", "show", "type", "bridge").out().lines().filter(l -> l.contains("jc-")).findAny().orElse(""));
    }

    @Test
    @Order(2)
    void dockersDefaultIpam() {
        String net = "jd" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--subnet", "10.232.0.0/24", "-o", "com.docker.network.bridge.name=jcbr" + ID, net);
        assertEquals("default", docker.ok("network", "inspect", net, "-f", "{{.IPAM.Driver}}"));
        String out = docker.ok("run", "--rm", "--network", net, IMAGE, "sh", "-c", "ip -4 -o addr show eth0; ip route; ping -c1 -W2 10.232.0.1");
        assertTrue(out.contains("inet 10.232.0.2/24"), out);
        assertTrue(out.contains("default via 10.232.0.1"), out);
        assertTrue(out.contains("1 packets received"), out);
        assertTrue(docker.inHost("ip", "link", "show", "jcbr" + ID).rc() == 0);
        docker.ok("network", "rm", net);
        assertTrue(docker.inHost("ip", "link", "show", "jcbr" + ID).rc() != 0, "the bridge goes with the network");
    }

    @Test
    @Order(3)
    void pingByIpAndNamePublishedPortsConnectDisconnect() {
        String net = "jp" + ID, other = "jq" + ID, srv = "srv" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.233.0.0/24",
                "-o", "jcni.plugins=bridge,portmap,bandwidth,firewall", "-o", "jcni.bandwidth.ingressRate=80000000",
                "-o", "jcni.bandwidth.ingressBurst=800000", net);
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.234.0.0/24", other);
        docker.ok("run", "-d", "--name", srv, "--network", net, "-p", "8080:80", IMAGE, "sh", "-c", WEB);
        String srvIp = ip(srv, net);
        String tc = docker.inHost("tc", "qdisc", "show").out();
        assertTrue(tc.contains("tbf") && tc.contains("rate 80Mbit"), "the bandwidth plugin shaped the host veth:\n" + tc);
        String byIp = docker.ok("run", "--rm", "--network", net, IMAGE, "ping", "-c1", "-W2", srvIp);
        assertTrue(byIp.contains("1 packets received"), byIp);
        String byName = docker.ok("run", "--rm", "--network", net, IMAGE, "ping", "-c1", "-W2", srv);
        assertTrue(byName.contains("(" + srvIp + ")") && byName.contains("1 packets received"), byName);
        // published port: from the host namespace (loopback and its bridge address) and from another container
        assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://127.0.0.1:8080/").out().contains("hello-from-jcni"));
        assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://10.233.0.1:8080/").out().contains("hello-from-jcni"));
        String viaHost = docker.ok("run", "--rm", "--network", other, IMAGE, "sh", "-c", get("10.234.0.1:8080"));
        assertTrue(viaHost.contains("hello-from-jcni"), viaHost);

        docker.ok("network", "connect", other, srv);
        String two = exec(srv, "ip -4 -o addr");
        String otherIp = ip(srv, other);
        assertTrue(two.contains("eth1") && two.contains(otherIp + "/24"), two);
        String fromOther = docker.ok("run", "--rm", "--network", other, IMAGE, "ping", "-c1", "-W2", srv);
        assertTrue(fromOther.contains("(" + otherIp + ")") && fromOther.contains("1 packets received"), fromOther);
        docker.ok("network", "disconnect", other, srv);
        assertFalse(exec(srv, "ip -o link").contains("eth1"));
        assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://127.0.0.1:8080/").out().contains("hello-from-jcni"), "still published");

        docker.ok("rm", "-f", srv);
        assertEquals("", docker.inHost("curl", "-s", "-m", "2", "http://127.0.0.1:8080/").out(), "unpublished with the container");
        docker.ok("network", "rm", net);
        docker.ok("network", "rm", other);
    }

    @Test
    @Order(4)
    void containersStartedInParallel() throws Exception {
        String net = "jx" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.239.0.0/24", net);
        List<java.util.concurrent.CompletableFuture<String>> runs = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String name = "px" + i + ID;
            runs.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> docker.ok("run", "-d", "--name", name, "--network", net, IMAGE,
                    "sleep", "300")));
        }
        runs.forEach(java.util.concurrent.CompletableFuture::join);
        java.util.Set<String> ips = new java.util.HashSet<>();
        for (int i = 0; i < 6; i++) ips.add(ip("px" + i + ID, net));
        assertEquals(6, ips.size(), ips.toString());
        for (String target : ips) assertTrue(exec("px0" + ID, "ping -c1 -W2 " + target).contains("1 packets received"), target);
        List<String> rm = new java.util.ArrayList<>(List.of("rm", "-f"));
        for (int i = 0; i < 6; i++) rm.add("px" + i + ID);
        docker.ok(rm.toArray(String[]::new));
        docker.ok("network", "rm", net);
    }

    @Test
    @Order(5)
    void internalNetworkHasNoWayOut() {
        String net = "ji" + ID, open = "jo" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.235.0.0/24", open);
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--internal", "--subnet", "10.236.0.0/24", net);
        docker.ok("run", "-d", "--name", "in" + ID, "--network", net, IMAGE, "sleep", "300");
        String out = docker.ok("run", "--rm", "--network", net, IMAGE, "sh", "-c",
                "ip route; ping -c1 -W2 in" + ID + "; ping -c1 -W1 10.235.0.1 || echo NO-WAY-OUT; ping -c1 -W1 10.236.0.1 || echo NO-HOST");
        assertFalse(out.contains("default"), out);
        assertTrue(out.contains("1 packets received"), "within the network: " + out);
        assertTrue(out.contains("NO-WAY-OUT") && out.contains("NO-HOST"), out);
        docker.ok("rm", "-f", "in" + ID);
        docker.ok("network", "rm", net);
        docker.ok("network", "rm", open);
    }

    @Test
    @Order(6)
    void containersKeepNetworkingWhenTheDriverIsKilledAndRestarted() throws Exception {
        String net = "jk" + ID, srv = "ks" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.237.0.0/24", net);
        docker.ok("run", "-d", "--name", srv, "--network", net, "-p", "8081:80", IMAGE, "sh", "-c", WEB);
        docker.ok("run", "-d", "--name", "kc" + ID, "--network", net, IMAGE, "sleep", "300");
        jcnid.kill();
        assertTrue(Files.exists(SOCKET), "a killed driver leaves its socket file");
        String during = exec("kc" + ID, "ping -c1 -W2 " + srv);
        assertTrue(during.contains("1 packets received"), during);
        Dockerd.restartDriver(jcnid, DRIVER);
        assertTrue(log().contains("networks=1 endpoints=2 reconciled=0"), log());
        String after = docker.ok("run", "--rm", "--network", net, IMAGE, "sh", "-c", "ping -c1 -W2 " + srv + " && " + get(srv + ":80"));
        assertTrue(after.contains("hello-from-jcni"), after);
        assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://127.0.0.1:8081/").out().contains("hello-from-jcni"));
        docker.ok("rm", "-f", srv, "kc" + ID);
        docker.ok("network", "rm", net);
    }

    @Test
    @Order(7)
    void networksSurviveADockerdRestart() throws Exception {
        String net = "jr" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.238.0.0/24", net);
        docker.ok("run", "-d", "--name", "rs" + ID, "--network", net, IMAGE, "sleep", "300");
        docker.restart(); // SIGTERM: dockerd stops the container, and so Leaves and deletes its endpoint
        assertEquals(net, docker.ok("network", "ls", "-q", "--filter", "name=" + net, "--format", "{{.Name}}"));
        docker.ok("start", "rs" + ID);
        String out = docker.ok("run", "--rm", "--network", net, IMAGE, "ping", "-c1", "-W2", "rs" + ID);
        assertTrue(out.contains("1 packets received"), out);
        docker.ok("rm", "-f", "rs" + ID);
        docker.ok("network", "rm", net);
    }

    /** The lines of a chain of iptables (in dockerd's namespace) that mention {@code word}. */
    static List<String> rulesMentioning(String table, String chain, String word) {
        return docker.inHost("iptables", "-t", table, "-S", chain).out().lines().filter(l -> l.contains(word)).toList();
    }

    @Test
    @Order(8)
    void aBridgeNameOfAnotherInterfaceIsRefusedAndAnExistingBridgeIsLeftInPlace() {
        String veth = "jve" + ID, peer = "jvp" + ID, bridge = "jbr" + ID, net = "jb" + ID;
        try {
            docker.inHost("ip", "link", "add", veth, "type", "veth", "peer", "name", peer);
            for (String name : List.of(veth, "lo")) {
                Sh.Run r = docker.run("network", "create", "-d", DRIVER, "--subnet", "10.240.0.0/24", "-o", "com.docker.network.bridge.name=" + name, net);
                assertNotEquals(0, r.rc());
                assertTrue(r.err().contains("existing interface " + name + " is not a bridge"), r.err());
            }
            assertEquals(0, docker.inHost("ip", "link", "show", veth).rc(), "the interface is still there");

            docker.inHost("ip", "link", "add", bridge, "type", "bridge");
            docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.240.0.0/24", "-o",
                    "com.docker.network.bridge.name=" + bridge, net);
            String out = docker.ok("run", "--rm", "--network", net, IMAGE, "ping", "-c1", "-W2", "10.240.0.1");
            assertTrue(out.contains("1 packets received"), out);
            assertTrue(docker.inHost("ip", "-o", "addr", "show", bridge).out().contains("10.240.0.1/24"));
            docker.ok("network", "rm", net);
            assertEquals(0, docker.inHost("ip", "link", "show", bridge).rc(), "a bridge jcni did not make stays");
            assertFalse(docker.inHost("ip", "-o", "addr", "show", bridge).out().contains("10.240.0.1"), "without the address jcni put on it");
            assertEquals(List.of(), rulesMentioning("filter", "JCNI-FORWARD", bridge), "its forwarding rules went with the network");
        } finally {
            docker.inHost("ip", "link", "del", veth);
            docker.inHost("ip", "link", "del", bridge);
        }
    }

    @Test
    @Order(9)
    void overlappingSubnetsAreRefused() {
        String a = "jva" + ID, b = "jvb" + ID, veth = "jvr" + ID, peer = "jvq" + ID;
        try {
            docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.241.0.0/16", a);
            for (List<String> ipam : List.of(List.of("--ipam-driver", DRIVER), List.<String>of())) { // jcni's IPAM, then Docker's own
                List<String> cmd = new java.util.ArrayList<>(List.of("network", "create", "-d", DRIVER));
                cmd.addAll(ipam);
                cmd.addAll(List.of("--subnet", "10.241.5.0/24", b));
                Sh.Run r = docker.run(cmd.toArray(String[]::new));
                assertNotEquals(0, r.rc());
                assertTrue(r.err().contains("Pool overlaps with other one on this address space"), r.err());
            }
            // a route of the host (dockerd's namespace) counts too
            docker.inHost("ip", "link", "add", veth, "type", "veth", "peer", "name", peer);
            docker.inHost("ip", "addr", "add", "10.242.0.1/16", "dev", veth);
            docker.inHost("ip", "link", "set", veth, "up");
            Sh.Run r = docker.run("network", "create", "-d", DRIVER, "--subnet", "10.242.9.0/24", b);
            assertNotEquals(0, r.rc());
            assertTrue(r.err().contains("Pool overlaps with other one on this address space") && r.err().contains("10.242.0.0/16 dev " + veth), r.err());
            assertEquals("", docker.ok("network", "ls", "-q", "--filter", "name=" + b));
        } finally {
            docker.run("network", "rm", a);
            docker.inHost("ip", "link", "del", veth);
        }
    }

    @Test
    @Order(10)
    void eightConcurrentCreatesWithOneBridgeNameMakeOneNetwork() throws Exception {
        String bridge = "jcbs" + ID;
        List<java.util.concurrent.CompletableFuture<Sh.Run>> runs = new java.util.ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String name = "jc" + i + ID, subnet = "10.243." + i + ".0/24";
            runs.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> docker.run("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER,
                    "--subnet", subnet, "-o", "com.docker.network.bridge.name=" + bridge, name)));
        }
        List<Sh.Run> done = runs.stream().map(java.util.concurrent.CompletableFuture::join).toList();
        List<Sh.Run> ok = done.stream().filter(r -> r.rc() == 0).toList();
        assertEquals(1, ok.size(), done.stream().map(Sh.Run::err).toList().toString());
        done.stream().filter(r -> r.rc() != 0).forEach(r -> assertTrue(r.err().contains("networks have same bridge name"), r.err()));
        String winner = docker.ok("network", "ls", "--filter", "driver=" + DRIVER, "--format", "{{.Name}}");
        assertTrue(winner.matches("jc[0-7]" + ID), winner);
        String out = docker.ok("run", "--rm", "--network", winner, IMAGE, "ip", "-4", "-o", "addr", "show", "eth0");
        assertTrue(out.contains("inet 10.243."), out);
        assertEquals(2, rulesMentioning("filter", "JCNI-FORWARD", bridge).size(), "the bridge's forwarding rules, once");
        docker.ok("network", "rm", winner);
        assertNotEquals(0, docker.inHost("ip", "link", "show", bridge).rc(), "jcni made this bridge: it goes");
        assertEquals(List.of(), rulesMentioning("filter", "JCNI-FORWARD", bridge));
    }

    @Test
    @Order(11)
    void aHostPortTakenByAnotherContainerIsRefused() {
        String a = "jpa" + ID, b = "jpb" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.244.0.0/24", a);
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.244.1.0/24", b);
        try {
            docker.ok("run", "-d", "--name", "pa" + ID, "--network", a, "-p", "8090:80", IMAGE, "sh", "-c", WEB);
            Sh.Run second = docker.run("run", "-d", "--name", "pb" + ID, "--network", b, "-p", "8090:80", IMAGE, "sh", "-c", WEB);
            assertNotEquals(0, second.rc());
            assertTrue(second.err().contains("Bind for 0.0.0.0:8090 failed: port is already allocated"), second.err());
            assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://127.0.0.1:8090/").out().contains("hello-from-jcni"), "the first keeps it");
            docker.ok("rm", "-f", "pa" + ID);
            docker.ok("start", "pb" + ID);
            assertTrue(docker.inHost("curl", "-s", "-m", "5", "http://127.0.0.1:8090/").out().contains("hello-from-jcni"), "free once released");
        } finally {
            docker.run("rm", "-f", "pa" + ID, "pb" + ID);
            docker.run("network", "rm", a);
            docker.run("network", "rm", b);
        }
    }

    @Test
    @Order(12)
    void aDamagedStateFileIsMovedAsideAndTheDriverServesTheRest() throws Exception {
        String good = "jsg" + ID, bad = "jsb" + ID;
        docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.245.0.0/24", good);
        docker.ok("network", "create", "-d", DRIVER, "--subnet", "10.245.1.0/24", bad);
        String badId = docker.ok("network", "inspect", "-f", "{{.Id}}", bad);
        Path file = state.resolve("state/networks/" + badId + ".json");
        jcnid.kill();
        Files.writeString(file, Files.readString(file).substring(0, 30)); // truncated
        try {
            Dockerd.restartDriver(jcnid, DRIVER);
            String log = log();
            assertTrue(log.contains("jcnid docker damaged state file " + file + ": not JSON"), log);
            assertTrue(log.contains("networks " + badId + " skipped"), log);
            String out = docker.ok("run", "--rm", "--network", good, IMAGE, "ping", "-c1", "-W2", "10.245.0.1");
            assertTrue(out.contains("1 packets received"), out);
            try (Stream<Path> s = Files.list(file.getParent())) {
                assertEquals(1, s.filter(p -> p.getFileName().toString().startsWith(badId + ".json.damaged-")).count());
            }
        } finally {
            docker.run("network", "rm", good);
            docker.run("network", "rm", bad);
            // The damaged network's rules are unknown to the driver now; the test that damaged it removes them.
            String br = "jc-" + badId.substring(0, 12);
            for (String rule : rulesMentioning("filter", "JCNI-FORWARD", br)) docker.inHost(("iptables " + rule.replace("-A ", "-D ")).split(" "));
            for (String rule : rulesMentioning("nat", "JCNI-MASQ", br)) docker.inHost(("iptables -t nat " + rule.replace("-A ", "-D ")).split(" "));
            try (Stream<Path> s = Files.list(file.getParent())) {
                for (Path p : s.filter(p -> p.getFileName().toString().contains(".damaged-")).toList()) Files.delete(p);
            }
        }
    }

    @Test
    @Order(13)
    void aUserOtherThanRootIsRefusedEvenWhenTheSocketIsOpenToAll() throws Exception {
        // dockerd keeps /run/docker 0700; a hard link of the socket in an open directory of the same
        // file system reaches the same socket without changing the modes of directories others share.
        Path open = Files.createTempDirectory(SOCKET.getParent().getParent().getParent(), "jcni-peer-");
        Path link = open.resolve("s.sock");
        try {
            Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(SOCKET, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
            Files.createLink(link, SOCKET);
            Sh.Run r = Sh.run(null, null, 60, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "curl", "-sS", "-m", "20",
                    "--unix-socket", link.toString(), "-X", "POST", "-d", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.246.0.0/24\"}",
                    "http://x/IpamDriver.RequestPool");
            assertNotEquals(0, r.rc(), r.out());
            assertFalse(r.out().contains("PoolID"), r.out());
            assertTrue(log().contains("jcnid docker rejected_peer=\"nobody\""), "refused by SO_PEERCRED, not by file modes: " + r.err());
            String asRoot = Sh.run(null, null, 60, "curl", "-sS", "-m", "20", "--unix-socket", link.toString(), "-X", "POST",
                    "http://x/Plugin.Activate").out();
            assertTrue(asRoot.contains("IpamDriver"), asRoot);
            String net = "jn" + ID; // and dockerd is still served
            docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.246.0.0/24", net);
            docker.ok("network", "rm", net);
        } finally {
            Files.deleteIfExists(link);
            Files.deleteIfExists(open);
            Files.setPosixFilePermissions(SOCKET, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        }
    }

    @Test
    @Order(14)
    void tricklingClientsNeitherStarveDockerdNorStay() throws Exception {
        List<java.nio.channels.SocketChannel> slow = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 40; i++) {
                java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(java.net.UnixDomainSocketAddress.of(SOCKET));
                ch.write(java.nio.ByteBuffer.wrap("POST /IpamDriver.RequestPool HTTP/1.1\r\nHost: \r\nContent-Length: 500\r\n\r\n{"
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                slow.add(ch);
            }
            String net = "jt" + ID;
            docker.ok("network", "create", "-d", DRIVER, "--ipam-driver", DRIVER, "--subnet", "10.247.0.0/24", net);
            String out = docker.ok("run", "--rm", "--network", net, IMAGE, "ping", "-c1", "-W2", "10.247.0.1");
            assertTrue(out.contains("1 packets received"), out);
            docker.ok("network", "rm", net);
            // one byte a second: they never go idle, and are dropped on the request-read deadline
            int open = slow.size();
            for (int i = 0; i < 120 && open > 0; i++) {
                open = 0;
                for (java.nio.channels.SocketChannel ch : slow) {
                    try {
                        ch.write(java.nio.ByteBuffer.wrap(new byte[] {' '}));
                        open++;
                    } catch (java.io.IOException dropped) {
                        // closed by the driver
                    }
                }
                Await.pause(1000);
            }
            assertEquals(0, open, "every trickling client was dropped");
        } finally {
            for (java.nio.channels.SocketChannel ch : slow) ch.close();
        }
    }

    @Test
    @Order(20)
    void nothingIsLeftBehind() throws Exception {
        assertEquals("", docker.ok("network", "ls", "-q", "--filter", "driver=" + DRIVER));
        String links = docker.inHost("ip", "-o", "link").out();
        assertFalse(links.contains("jc-") || links.contains("jcv") || links.contains("jcbr"), links);
        String nft = docker.inHost("nft", "list", "table", "inet", "jcni").out();
        assertFalse(nft.contains("10.23"), "no nft element of a test network:\n" + nft);
        String fwd = docker.inHost("iptables", "-S", "JCNI-FORWARD").out();
        assertEquals("-N JCNI-FORWARD", fwd.strip());
        assertEquals("-N JCNI-MASQ", docker.inHost("iptables", "-t", "nat", "-S", "JCNI-MASQ").out().strip());
        for (String kind : List.of("networks", "endpoints", "pools")) {
            Path d = state.resolve("state").resolve(kind);
            if (!Files.isDirectory(d)) continue;
            try (Stream<Path> s = Files.list(d)) {
                assertEquals(List.of(), s.toList(), kind);
            }
        }
        try (Stream<Path> s = Files.walk(state.resolve("results"))) {
            assertEquals(List.of(), s.filter(Files::isRegularFile).toList(), "CNI result cache");
        }
        Path nftState = state.resolve("nft");
        if (Files.isDirectory(nftState)) {
            try (Stream<Path> s = Files.walk(nftState)) {
                assertEquals(List.of(), s.filter(Files::isRegularFile).filter(p -> p.toString().contains("/att/")).toList(), "nft ownership");
            }
        }
        assertEquals("", Sh.ok("ip", "netns", "list").lines().filter(l -> l.startsWith("jcni-stage-")).findAny().orElse(""));
    }
}
