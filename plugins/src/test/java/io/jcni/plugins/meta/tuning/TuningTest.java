package io.jcni.plugins.meta.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.MacAddress;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Peers;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The plugin against real interfaces: a container namespace holding eth0, a veth whose peer lives
 * in a second (host-like) test namespace. Everything is checked with iproute2 and by reading
 * /proc/sys inside the namespace, not with jcni's own netlink code.
 */
@Tag("root")
class TuningTest {
    private static final String ORIGINAL_MAC = "02:00:0a:00:00:01";
    private static final Path REFERENCE = Path.of("/usr/lib/cni/tuning");

    @TempDir
    Path dataDir;

    private String container;
    private String host;
    private String netnsPath;

    private World world;

    @BeforeEach
    void createWorld() throws IOException {
        world = new World("jt");
        try {
            host = world.host;
            netnsPath = world.container();
            container = World.nsName(netnsPath);
            try (Netns c = Netns.open(netnsPath); Netns h = Netns.open(World.path(host)); Rtnl rt = Rtnl.open(c)) {
                rt.addVeth("eth0", "veth-h", h, 1500, MacAddress.parse(ORIGINAL_MAC));
            }
        } catch (RuntimeException e) {
            world.close();
            throw e;
        }
    }

    @AfterEach
    void deleteWorld() {
        world.close();
    }

    // ------------------------------------------------------------------ helpers

    private String conf(String version, String body) {
        return conf(version, body, prev(version));
    }

    private String conf(String version, String body, String prevResult) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"tnet\",\"type\":\"tuning\",\"dataDir\":\"" + dataDir + "\""
                + body + (prevResult == null ? "" : ",\"prevResult\":" + prevResult) + "}";
    }

    /** What a main plugin such as ptp would have returned, in {@code version}'s format. */
    private String prev(String version) {
        if (version.equals("0.1.0") || version.equals("0.2.0")) {
            return "{\"cniVersion\":\"" + version + "\",\"ip4\":{\"ip\":\"10.1.0.2/24\",\"gateway\":\"10.1.0.1\"},\"dns\":{}}";
        }
        String ipVersion = version.startsWith("0.") ? "\"version\":\"4\"," : "";
        return "{\"cniVersion\":\"" + version + "\",\"interfaces\":[{\"name\":\"veth-h\",\"mac\":\"aa:aa:aa:aa:aa:aa\"},"
                + "{\"name\":\"eth0\",\"mac\":\"" + ORIGINAL_MAC + "\",\"sandbox\":\"" + netnsPath + "\"}],"
                + "\"ips\":[{" + ipVersion + "\"interface\":1,\"address\":\"10.1.0.2/24\",\"gateway\":\"10.1.0.1\"}],\"dns\":{}}";
    }

    private PluginCall call() {
        return new PluginCall("tuning").env("CNI_NETNS", netnsPath).env("CNI_IFNAME", "eth0").env("CNI_CONTAINERID", "ctr1");
    }

    private Map<String, Object> eth0() {
        List<Object> l = Json.asList(Json.parse(exec("ip", "-j", "-d", "-n", container, "link", "show", "dev", "eth0")));
        return Json.asObject(l.getFirst());
    }

    private List<Object> flags() {
        return Json.asList(eth0().get("flags"));
    }

    private String sysctl(String slashedKey) {
        return exec("ip", "netns", "exec", container, "cat", "/proc/sys/" + slashedKey).strip();
    }

    private Path backupFile() {
        return dataDir.resolve("ctr1_eth0.json");
    }

    private void assertOriginal() {
        Map<String, Object> l = eth0();
        assertEquals(ORIGINAL_MAC, l.get("address"));
        assertEquals(1500L, l.get("mtu"));
        assertEquals(1000L, l.get("txqlen"));
        assertFalse(flags().contains("PROMISC"));
        assertEquals(0L, l.get("promiscuity"));
        assertEquals(0L, l.get("allmulti"));
    }

    private static final String ALL = ",\"mac\":\"c2:b0:57:49:47:f1\",\"mtu\":1454,\"promisc\":true,\"allmulti\":true,\"txQLen\":500,"
            + "\"sysctl\":{\"net.ipv4.conf.IFNAME.arp_filter\":\"1\",\"net.core.somaxconn\":\"500\",\"net.ipv6.conf.eth0.hop_limit\":\"33\"}";

    // ------------------------------------------------------------------ tests

    @Test
    void addAppliesEverythingCheckPassesDelRestores() throws IOException {
        assertOriginal();
        assertEquals("0", sysctl("net/ipv4/conf/eth0/arp_filter"));

        Map<String, Object> r = call().ok("ADD", conf("1.0.0", ALL));

        Map<String, Object> l = eth0();
        assertEquals("c2:b0:57:49:47:f1", l.get("address"));
        assertEquals(1454L, l.get("mtu"));
        assertEquals(500L, l.get("txqlen"));
        assertTrue(flags().contains("PROMISC"));
        assertEquals(1L, l.get("allmulti"));
        assertEquals("1", sysctl("net/ipv4/conf/eth0/arp_filter"));
        assertEquals("500", sysctl("net/core/somaxconn"));
        assertEquals("33", sysctl("net/ipv6/conf/eth0/hop_limit"));

        // prevResult passes through; only the container interface's MAC changes.
        Map<String, Object> expected = Json.parseObject(prev("1.0.0").replace("\"mac\":\"" + ORIGINAL_MAC, "\"mac\":\"c2:b0:57:49:47:f1"));
        assertEquals(Json.write(expected), Json.write(r));

        assertEquals("{\n \"mac\": \"" + ORIGINAL_MAC + "\",\n \"promisc\": false,\n \"mtu\": 1500,\n \"allmulti\": false,\n"
                + " \"txQLen\": 1000\n}", Files.readString(backupFile()));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(backupFile())));

        call().ok("CHECK", conf("1.0.0", ALL, Json.write(r)));

        call().ok("DEL", conf("1.0.0", ALL));
        assertOriginal();
        assertFalse(Files.exists(backupFile()));
        // Sysctls are not restored, as upstream.
        assertEquals("1", sysctl("net/ipv4/conf/eth0/arp_filter"));
        assertEquals("500", sysctl("net/core/somaxconn"));

        // DEL again: nothing left to do.
        call().ok("DEL", conf("1.0.0", ALL));
        assertOriginal();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void everyVersion(String v) {
        String body = ",\"mac\":\"c2:b0:57:49:47:f1\",\"mtu\":1400,\"sysctl\":{\"net.ipv4.conf.IFNAME.arp_ignore\":\"2\"}";
        Map<String, Object> r = call().ok("ADD", conf(v, body));
        assertEquals(v, r.get("cniVersion"));
        assertEquals("c2:b0:57:49:47:f1", eth0().get("address"));
        assertEquals(1400L, eth0().get("mtu"));
        assertEquals("2", sysctl("net/ipv4/conf/eth0/arp_ignore"));
        if (v.equals("0.1.0") || v.equals("0.2.0")) {
            assertEquals("{\"ip\":\"10.1.0.2/24\",\"gateway\":\"10.1.0.1\"}", Json.write(r.get("ip4")));
        } else {
            assertEquals(Json.write(Json.parse(prev(v).replace("\"mac\":\"" + ORIGINAL_MAC, "\"mac\":\"c2:b0:57:49:47:f1"))), Json.write(r));
        }
        if (!v.startsWith("0.1") && !v.startsWith("0.2") && !v.startsWith("0.3")) {
            call().ok("CHECK", conf(v, body, Json.write(r)));
        } else {
            assertEquals(1L, call().fails("CHECK", conf(v, body, Json.write(r))).get("code"), "no CHECK before 0.4.0");
        }
        call().ok("DEL", conf(v, body, null));
        assertOriginal();
    }

    @Test
    void checkNoticesEachSettingThatIsNotInEffect() {
        call().ok("ADD", conf("1.0.0", ALL));
        String c = conf("1.0.0", ALL);
        call().ok("CHECK", c);

        exec("ip", "-n", container, "link", "set", "eth0", "mtu", "1300");
        assertEquals("Error: Tuning configured MTU of eth0 is 1454, current value is 1300", call().fails("CHECK", c).get("msg"));
        exec("ip", "-n", container, "link", "set", "eth0", "mtu", "1454");

        exec("ip", "-n", container, "link", "set", "eth0", "txqueuelen", "99");
        assertEquals("Error: Tuning configured Transmit Queue Length of eth0 is 500, current value is 99", call().fails("CHECK", c).get("msg"));
        exec("ip", "-n", container, "link", "set", "eth0", "txqueuelen", "500");

        exec("ip", "-n", container, "link", "set", "eth0", "allmulticast", "off");
        assertEquals("Error: Tuning configured all-multicast mode of eth0 is true, current value is false", call().fails("CHECK", c).get("msg"));
        exec("ip", "-n", container, "link", "set", "eth0", "allmulticast", "on");

        exec("ip", "-n", container, "link", "set", "eth0", "address", "02:00:00:00:00:99");
        assertEquals("Error: Tuning configured Ethernet of eth0 is c2:b0:57:49:47:f1, current value is 02:00:00:00:00:99",
                call().fails("CHECK", c).get("msg"));
        exec("ip", "-n", container, "link", "set", "eth0", "address", "c2:b0:57:49:47:f1");

        exec("ip", "netns", "exec", container, "sh", "-c", "echo 0 > /proc/sys/net/ipv4/conf/eth0/arp_filter");
        assertEquals("Error: Tuning configured value of /proc/sys/net/ipv4/conf/eth0/arp_filter is 1, current value is 0",
                call().fails("CHECK", c).get("msg"));
        exec("ip", "netns", "exec", container, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/conf/eth0/arp_filter");
        call().ok("CHECK", c);

        // As upstream, promiscuous mode must be off unless configured on.
        String noPromisc = conf("1.0.0", ",\"mtu\":1454");
        assertEquals("Error: Tuning link eth0 configured promisc is false, current value is 1",
                call().fails("CHECK", noPromisc).get("msg"));

        assertEquals("failed to read sysctl \"net.ipv4.conf.IFNAME.arp_filter\"", call().env("CNI_IFNAME", "eth9").fails("CHECK", c).get("msg"));
        assertEquals("Cannot find container link eth9", call().env("CNI_IFNAME", "eth9").fails("CHECK", noPromisc).get("msg"));
        call().ok("DEL", c);
    }

    @Test
    void badSysctlKeyChangesNothing() {
        String before = sysctl("net/core/somaxconn");
        String body = ",\"mtu\":1400,\"sysctl\":{\"net.core.somaxconn\":\"" + (before.equals("77") ? "78" : "77") + "\","
                + "\"net.ipv4.conf.../../..\":\"1\"}";
        Map<String, Object> e = call().fails("ADD", conf("1.0.0", body));
        assertEquals(7L, e.get("code"));
        assertEquals("invalid net sysctl key: \"net.ipv4.conf.../../..\"", e.get("msg"));
        assertEquals(before, sysctl("net/core/somaxconn"));
        assertEquals(1500L, eth0().get("mtu"));
        assertFalse(Files.exists(backupFile()));

        e = call().fails("ADD", conf("1.0.0", ",\"sysctl\":{\"kernel.hostname\":\"pwned\"}"));
        assertEquals("invalid net sysctl key: \"kernel.hostname\"", e.get("msg"));

        e = call().fails("ADD", conf("1.0.0", ",\"sysctl\":{\"net.core.no_such_key\":\"1\"}"));
        assertEquals("failed to set sysctl \"net.core.no_such_key\" to \"1\"", e.get("msg"));
    }

    @Test
    void macFromCniArgsCapabilityAndArgs() {
        String rc = ",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}";
        String args = ",\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:04\",\"mtu\":1280,\"sysctl\":{\"net.ipv4.conf.IFNAME.arp_announce\":\"2\"}}}";
        PluginCall withEnv = call().env("CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=p;MAC=02:00:00:00:00:02");

        Map<String, Object> r = withEnv.ok("ADD", conf("1.0.0", ",\"mac\":\"02:00:00:00:00:01\""));
        assertEquals("02:00:00:00:00:02", eth0().get("address"));
        assertEquals("02:00:00:00:00:02", Json.asObject(Json.asList(r.get("interfaces")).get(1)).get("mac"));
        withEnv.ok("DEL", conf("1.0.0", ""));

        withEnv.ok("ADD", conf("1.0.0", rc));
        assertEquals("02:00:00:00:00:03", eth0().get("address"));
        withEnv.ok("DEL", conf("1.0.0", ""));

        withEnv.ok("ADD", conf("1.0.0", rc + ",\"mtu\":1400" + args));
        assertEquals("02:00:00:00:00:04", eth0().get("address"));
        assertEquals(1280L, eth0().get("mtu"));
        assertEquals("2", sysctl("net/ipv4/conf/eth0/arp_announce"));
        withEnv.ok("CHECK", conf("1.0.0", rc + ",\"mtu\":1400" + args));
        withEnv.ok("DEL", conf("1.0.0", ""));
        assertOriginal();
    }

    @Test
    void delIsIdempotentWhenTheNamespaceOrInterfaceIsGone() {
        call().ok("ADD", conf("1.0.0", ",\"mtu\":1400"));
        assertTrue(Files.exists(backupFile()));
        exec("ip", "-n", container, "link", "del", "eth0");
        call().ok("DEL", conf("1.0.0", ""));
        assertFalse(Files.exists(backupFile()), "nothing left to restore: the file goes too");

        try (Netns c = Netns.open(Netns.pathOf(container)); Netns h = Netns.open(Netns.pathOf(host)); Rtnl rt = Rtnl.open(c)) {
            rt.addVeth("eth0", "veth-h", h, 1500, MacAddress.parse(ORIGINAL_MAC));
        }
        call().ok("ADD", conf("1.0.0", ",\"mtu\":1400"));
        Netns.delete(container);
        call().ok("DEL", conf("1.0.0", ""));
        assertFalse(Files.exists(backupFile()));
        call().ok("DEL", conf("1.0.0", ""));
        call().env("CNI_NETNS", null).ok("DEL", conf("1.0.0", ""));
        Map<String, Object> e = call().fails("ADD", conf("1.0.0", ",\"mtu\":1400"));
        // The reference's words (ns.GetNS), as /usr/lib/cni/bridge answers; its loopback and tuning say only the part after the first colon.
        assertEquals("failed to open netns \"" + netnsPath + "\": failed to Statfs \"" + netnsPath + "\": no such file or directory", e.get("msg"));
    }

    @Test
    void onlySysctlsNeedNoBackupAndNoInterface() {
        Map<String, Object> r = call().env("CNI_IFNAME", "net1").ok("ADD", conf("1.0.0", ",\"sysctl\":{\"net.ipv4.ping_group_range\":\"0 1000\"}"));
        assertEquals(Json.write(Json.parse(prev("1.0.0"))), Json.write(r));
        assertEquals("0\t1000", sysctl("net/ipv4/ping_group_range"));
        assertFalse(Files.exists(dataDir.resolve("ctr1_net1.json")));
    }

    @Test
    void allowlistIsHonoured(@TempDir Path etc) throws IOException {
        Path list = etc.resolve("allowlist.conf");
        Files.writeString(list, "^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]*$\n");
        Skel.Outcome ok = run(new Tuning(list), "ADD", conf("1.0.0", ",\"sysctl\":{\"net.ipv4.conf.IFNAME.arp_filter\":\"1\"}"));
        assertEquals(0, ok.exitCode(), ok.stdout());
        // A new namespace's ip_forward copies the root namespace's on this kernel (1 on any host running
        // Docker), so the test compares with what the namespace had, not with a fixed value.
        String forwardBefore = sysctl("net/ipv4/ip_forward");
        String refused = "1".equals(forwardBefore) ? "0" : "1";
        Skel.Outcome no = run(new Tuning(list), "ADD", conf("1.0.0", ",\"sysctl\":{\"net.ipv4.ip_forward\":\"" + refused + "\"}"));
        assertEquals(1, no.exitCode());
        assertTrue(no.stdout().contains("Sysctl net.ipv4.ip_forward is not allowed."), no.stdout());
        assertEquals(forwardBefore, sysctl("net/ipv4/ip_forward"));
    }

    /** The backup file is upstream's: the reference plugin restores what jcni saved and vice versa. */
    @Test
    @Tag("interop")
    void backupInteroperatesWithTheReferencePlugin() throws IOException {
        Peers.requireExecutable(REFERENCE, "containernetworking-plugins");
        String body = ",\"mac\":\"c2:b0:57:49:47:f1\",\"mtu\":1454,\"promisc\":true,\"allmulti\":true";

        Map<String, Object> ours = call().ok("ADD", conf("1.0.0", body));
        String ourBackup = Files.readString(backupFile());
        reference("DEL", conf("1.0.0", body));
        assertOriginal();
        assertFalse(Files.exists(backupFile()));

        String theirs = reference("ADD", conf("1.0.0", body));
        assertEquals(Json.write(Json.parseObject(theirs)), Json.write(ours), "the same result as the reference");
        assertEquals("c2:b0:57:49:47:f1", eth0().get("address"));
        assertEquals(ourBackup, Files.readString(backupFile()), "byte for byte the same backup file");
        call().ok("DEL", conf("1.0.0", body));
        assertOriginal();
        assertFalse(Files.exists(backupFile()));
    }

    // ------------------------------------------------------------------ process helpers

    private Skel.Outcome run(Tuning plugin, String command, String stdin) {
        Map<String, String> env = new HashMap<>(Map.of("CNI_COMMAND", command, "CNI_CONTAINERID", "ctr1", "CNI_NETNS", netnsPath,
                "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent"));
        return Skel.run(() -> plugin, env, stdin.getBytes(StandardCharsets.UTF_8), PluginRegistry.context(new PrintStream(new ByteArrayOutputStream())));
    }

    private String reference(String command, String stdin) {
        ProcessBuilder pb = new ProcessBuilder(REFERENCE.toString());
        pb.environment().putAll(Map.of("CNI_COMMAND", command, "CNI_CONTAINERID", "ctr1", "CNI_NETNS", netnsPath,
                "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni"));
        return run(pb, stdin);
    }

    static String exec(String... cmd) {
        return Proc.ok(cmd);
    }

    private static String run(ProcessBuilder pb, String stdin) {
        return Proc.run(pb, stdin, 20).ok(pb.command());
    }
}
