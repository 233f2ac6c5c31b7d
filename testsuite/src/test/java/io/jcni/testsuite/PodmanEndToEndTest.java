package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.Sh;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * podman (CNI backend) running containers on a network made of jcni's plugins, chained as podman's
 * own CNI networks are (bridge + host-local, portmap, firewall, tuning): on a host running Docker
 * (iptables' FORWARD policy DROP) the firewall's rules in iptables let the containers reach each other.
 *
 * <p>This is one of the few tests allowed to touch the root namespace, because podman puts the bridge
 * there; it removes the bridge, its containers and images, and restores ip_forward afterwards.
 */
@Tag("root")
@Tag("interop")
class PodmanEndToEndTest {
    static final String ID = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    static final String NET = "jcnie2e" + ID;
    static final String BRIDGE = "jce2e" + ID;
    static Installed jcni;
    static Podman podman;
    static Path dataDir;
    static String ipForwardBefore;
    static boolean nftTableBefore;
    static boolean jcnidCgroupBefore;
    /** Whether iptables' CNI-FORWARD chain (the firewall's, on a host with iptables' filter table) was there before. */
    static boolean cniForwardBefore;
    static final int HOST_PORT = 18000 + Integer.parseInt(ID, 16) % 1000;

    @BeforeAll
    static void setUp() throws Exception {
        jcni = Installed.get();
        ipForwardBefore = Files.readString(Path.of("/proc/sys/net/ipv4/ip_forward")).strip();
        nftTableBefore = Sh.run("nft", "list", "table", "inet", "jcni").rc() == 0;
        jcnidCgroupBefore = !Jcnid.cgroupDirs("jcnid").isEmpty();
        cniForwardBefore = !iptablesFilter() || Sh.run("iptables", "-w", "-S", "CNI-FORWARD").rc() == 0;
        for (String type : List.of("bridge", "host-local", "tuning", "portmap", "firewall")) {
            // podman takes a plugin from the first directory that has it: these must be jcni's.
            assertTrue(Files.isExecutable(jcni.plugin(type)), "jcni ships " + type);
        }
        podman = new Podman(List.of(jcni.bin, Path.of("/usr/lib/cni")));
        dataDir = podman.dir.resolve("ipam");
        // What `podman network create` writes with the CNI backend (bridge, portmap, firewall, tuning),
        // with state kept in the test's directory and one sysctl for tuning to show.
        Files.writeString(podman.netConfDir.resolve("50-" + NET + ".conflist"), """
                {"cniVersion":"1.0.0","name":"%s","plugins":[
                  {"type":"bridge","bridge":"%s","isGateway":true,"ipMasq":true,"hairpinMode":true,"dataDir":"%s",
                   "ipam":{"type":"host-local","subnet":"10.125.%d.0/24","dataDir":"%s","routes":[{"dst":"0.0.0.0/0"}]}},
                  {"type":"portmap","capabilities":{"portMappings":true},"dataDir":"%s"},
                  {"type":"firewall","backend":"","dataDir":"%s"},
                  {"type":"tuning","sysctl":{"net.ipv4.conf.eth0.arp_notify":"1"}}]}
                """.formatted(NET, BRIDGE, podman.dir.resolve("nft"), Integer.parseInt(ID, 16) % 250, dataDir,
                podman.dir.resolve("nft"), podman.dir.resolve("nft")));
        // The same bridge with masquerading and published ports, as podman's own default network has.
        Files.writeString(podman.netConfDir.resolve("51-" + NET + "pm.conflist"), """
                {"cniVersion":"1.0.0","name":"%spm","plugins":[
                  {"type":"bridge","bridge":"%s","isGateway":true,"ipMasq":true,"hairpinMode":true,"dataDir":"%s",
                   "ipam":{"type":"host-local","subnet":"10.125.%d.0/24","dataDir":"%s","routes":[{"dst":"0.0.0.0/0"}]}},
                  {"type":"portmap","capabilities":{"portMappings":true},"dataDir":"%s"}]}
                """.formatted(NET, BRIDGE + "p", podman.dir.resolve("nft"), Integer.parseInt(ID, 16) % 250 + 1, dataDir,
                podman.dir.resolve("nft")));
    }

    @AfterAll
    static void tearDown() throws Exception {
        if (podman != null) podman.close();
        // podman's cleanup (run by conmon, without this JVM's JCNI_AUTOSTART=0) may have started a
        // jcnid on the installation's socket: it must not outlive the test.
        if (jcni != null) Jcnid.killDaemonsOn(jcni.socket);
        if (!jcnidCgroupBefore) Jcnid.removeEmptyCgroup("jcnid"); // the shim's default cgroup for what it starts
        Sh.quiet("ip", "link", "del", BRIDGE);
        Sh.quiet("ip", "link", "del", BRIDGE + "p");
        if (!nftTableBefore) Sh.quiet("nft", "delete", "table", "inet", "jcni");
        if (!cniForwardBefore) {
            // The firewall leaves its chains (as the reference: other containers may use them); the test's go.
            Sh.quiet("iptables", "-w", "-D", "FORWARD", "-m", "comment", "--comment", "CNI firewall plugin rules", "-j", "CNI-FORWARD");
            Sh.quiet("iptables", "-w", "-F", "CNI-FORWARD");
            Sh.quiet("iptables", "-w", "-X", "CNI-FORWARD");
            Sh.quiet("iptables", "-w", "-X", "CNI-ADMIN"); // only when empty: an administrator's rules stay
        }
        if (ipForwardBefore != null) Files.writeString(Path.of("/proc/sys/net/ipv4/ip_forward"), ipForwardBefore);
        assertFalse(Sh.ok("ip", "-o", "link").contains(BRIDGE), "the test's bridge must be gone");
    }

    @Test
    void twoContainersPingEachOtherAndLeaveNothingBehind() throws Exception {
        podman.ok("run", "-d", "--name", "a" + ID, "--network", NET, "localhost/jcni-bb", "sleep", "300");
        podman.ok("run", "-d", "--name", "b" + ID, "--network", NET, "localhost/jcni-bb", "sleep", "300");
        String ipA = podman.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", "a" + ID);
        String ipB = podman.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "\").IPAddress}}", "b" + ID);
        assertNotEquals(ipA, ipB);
        assertTrue(Files.exists(dataDir.resolve(NET).resolve(ipA)), "host-local allocation for " + ipA);

        podman.ok("exec", "a" + ID, "ping", "-c", "2", "-W", "2", ipB);
        podman.ok("exec", "b" + ID, "ping", "-c", "2", "-W", "2", ipA);
        assertEquals("1", podman.ok("exec", "a" + ID, "cat", "/proc/sys/net/ipv4/conf/eth0/arp_notify"), "tuning applied");

        if (iptablesFilter()) {
            String rules = Sh.ok("iptables", "-w", "-S", "CNI-FORWARD");
            assertTrue(rules.contains("-A CNI-FORWARD -s " + ipA + "/32 -j ACCEPT"), rules);
        }

        podman.ok("rm", "-f", "-t", "0", "a" + ID, "b" + ID);
        if (iptablesFilter()) {
            String rules = Sh.ok("iptables", "-w", "-S", "CNI-FORWARD");
            assertFalse(rules.contains(ipA + "/32") || rules.contains(ipB + "/32"), "the firewall's rules went with the containers: " + rules);
        }

        try (Stream<Path> s = Files.list(dataDir.resolve(NET))) {
            List<String> left = s.map(p -> p.getFileName().toString())
                    .filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip")).toList();
            assertEquals(List.of(), left, "no allocation may outlive its container");
        }
        try (Stream<Path> s = Files.exists(Path.of("/var/lib/cni/results")) ? Files.list(Path.of("/var/lib/cni/results")) : Stream.empty()) {
            assertEquals(List.of(), s.filter(p -> p.getFileName().toString().startsWith(NET + "-")).toList(), "no cached result");
        }
        RetiredLinks.awaitNone(null); // the plugin's DEL retires the veth; it is deleted right after
        String veths = Sh.ok("ip", "-o", "link", "show", "master", BRIDGE);
        assertEquals("", veths.strip(), "no veth left on the bridge");
    }

    /** Whether the host's iptables has a filter table (iptables-nft: asked of nft, so that listing creates nothing). */
    static boolean iptablesFilter() {
        return Sh.run("nft", "list", "chain", "ip", "filter", "FORWARD").rc() == 0;
    }

    /** podman run -p HOST:CONTAINER through jcni's portmap: the port answers on the host, and no longer after rm. */
    @Test
    void publishedPortAnswersOnTheHostUntilTheContainerGoes() throws Exception {
        String name = "web" + ID;
        Path www = podman.dir.resolve("www");
        Files.createDirectories(www);
        Files.writeString(www.resolve("index.html"), "hello from " + name + "\n");
        podman.ok("run", "-d", "--name", name, "--network", NET + "pm", "-p", HOST_PORT + ":80", "-v", www + ":/www",
                "localhost/jcni-bb", "httpd", "-f", "-p", "80", "-h", "/www");
        String ip = podman.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + NET + "pm\").IPAddress}}", name);
        String answer = "";
        for (int i = 0; i < 50 && !answer.contains("hello"); i++) {
            answer = Sh.run(null, null, 10, "curl", "-s", "--max-time", "2", "http://127.0.0.1:" + HOST_PORT + "/").out();
            if (!answer.contains("hello")) Thread.sleep(100);
        }
        assertEquals("hello from " + name + "\n", answer, "published port on the host's localhost");
        String map = Sh.ok("nft", "list", "map", "inet", "jcni", "pm4");
        assertTrue(map.contains(ip), map);

        podman.ok("rm", "-f", "-t", "0", name);
        assertNotEquals(0, Sh.run(null, null, 10, "curl", "-s", "--max-time", "2", "http://127.0.0.1:" + HOST_PORT + "/").rc(),
                "nothing answers after rm");
        assertFalse(Sh.ok("nft", "list", "map", "inet", "jcni", "pm4").contains(ip), "the mapping is gone");
        assertFalse(Sh.ok("nft", "list", "table", "inet", "jcni").contains(ip), "the masquerading is gone");
    }
}
