package io.jcni.plugins.main.hostdevice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The plugin on real namespaces: a private "host" netns holding a veth pair, one end of which is
 * the device handed to containers. Device state is read with iproute2, not jcni's netlink code.
 */
@Tag("root")
class HostDeviceTest {
    private static final String MAC = "02:77:00:00:00:05";
    private static final String ALIAS = "uplink-a";

    private NetWorld w;
    private String dev;
    private String peer;
    private Path dataDir;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("static");
        byte[] b = new byte[3];
        ThreadLocalRandom.current().nextBytes(b);
        dev = "hd" + HexFormat.of().formatHex(b);
        peer = "hp" + HexFormat.of().formatHex(b);
        dataDir = w.dir.resolve("state");
        host("link", "add", dev, "address", MAC, "mtu", "1400", "type", "veth", "peer", "name", peer);
        configureDevice();
        host("link", "set", peer, "up");
    }

    /** The device's host state the tests expect back: alias, addresses, up (the reference's DEL drops them). */
    private void configureDevice() {
        host("link", "set", dev, "alias", ALIAS);
        host("addr", "add", "10.77.0.5/24", "dev", dev);
        host("addr", "add", "fd77::5/64", "dev", dev, "nodad");
        host("link", "set", dev, "up");
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    private void host(String... args) {
        String[] cmd = new String[args.length + 3];
        cmd[0] = "ip";
        cmd[1] = "-n";
        cmd[2] = w.hostName;
        System.arraycopy(args, 0, cmd, 3, args.length);
        NetWorld.Exec e = NetWorld.sh(cmd);
        assertEquals(0, e.rc(), String.join(" ", cmd) + ": " + e.out());
    }

    private static Map<String, Object> link(String ns, String name) {
        NetWorld.Exec e = NetWorld.sh("ip", "-j", "-d", "-n", NetWorld.nsName(ns), "link", "show", "dev", name);
        if (e.rc() != 0) return null;
        return Json.asObject(Json.asList(Json.parse(e.out())).getFirst());
    }

    private static String addresses(String ns, String name) {
        return NetWorld.sh("ip", "-n", NetWorld.nsName(ns), "-br", "addr", "show", "dev", name).out();
    }

    private String conf(String version, String extra) {
        return """
            {"cniVersion":"%s","name":"hdnet","type":"host-device","device":"%s","dataDir":"%s"%s}
            """.formatted(version, dev, dataDir, extra);
    }

    private static final String STATIC = ",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.78.0.2/24\",\"gateway\":\"10.78.0.1\"}],"
            + "\"routes\":[{\"dst\":\"10.79.0.0/16\"}]}";

    private Path stateFile(String cid, String ifname) {
        return dataDir.resolve("hdnet").resolve(cid + "_" + ifname + ".json");
    }

    /** The device is on the host as setUp made it: name, MAC, MTU, alias, address, up. */
    private void assertRestored() {
        Map<String, Object> l = link(w.hostName, dev);
        assertTrue(l != null, dev + " is back on the host");
        assertEquals(MAC, l.get("address"));
        assertEquals(1400L, l.get("mtu"));
        assertEquals(ALIAS, l.get("ifalias"));
        assertTrue(Json.asList(l.get("flags")).contains("UP"), String.valueOf(l.get("flags")));
        assertTrue(addresses(w.hostName, dev).contains("10.77.0.5/24"), addresses(w.hostName, dev));
        assertTrue(addresses(w.hostName, dev).contains("fd77::5/64"), addresses(w.hostName, dev));
    }

    @Test
    void addMovesTheDeviceInCheckPassesDelRestoresItTwice() {
        String c = w.container();
        Map<String, Object> r = w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", ""));
        assertEquals("{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"" + MAC + "\",\"sandbox\":\"" + c + "\"}],"
                + "\"dns\":{}}", Json.write(r));

        assertEquals(null, link(w.hostName, dev), "gone from the host");
        Map<String, Object> in = link(c, "eth0");
        assertEquals(dev, in.get("ifalias"), "the original name is kept in the alias, as the reference keeps it");
        assertEquals(1400L, in.get("mtu"));
        assertTrue(Json.asList(in.get("flags")).contains("UP"));
        assertTrue(Files.exists(stateFile("c1", "eth0")));

        w.ok("host-device", w.env("CHECK", "c1", c, "eth0"), conf("1.0.0", ",\"prevResult\":" + Json.write(r)));

        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        assertRestored();
        assertEquals(null, link(c, "eth0"));
        assertFalse(Files.exists(stateFile("c1", "eth0")));
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        assertRestored();
        assertTrue(NetWorld.in(w.hostName, "ip", "route").out().contains("10.77.0.0/24 dev " + dev), "the prefix route is back");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void everyVersionWithIpam(String v) {
        String c = w.container();
        Map<String, Object> r = w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf(v, STATIC));
        assertEquals(v, r.get("cniVersion"));
        assertTrue(addresses(c, "eth0").contains("10.78.0.2/24"), addresses(c, "eth0"));
        assertTrue(NetWorld.in(c, "ip", "route").out().contains("10.79.0.0/16 via 10.78.0.1 dev eth0"));
        if (v.startsWith("0.1") || v.startsWith("0.2")) {
            assertEquals("{\"ip\":\"10.78.0.2/24\",\"gateway\":\"10.78.0.1\",\"routes\":[{\"dst\":\"10.79.0.0/16\"}]}", Json.write(r.get("ip4")));
        } else {
            Map<String, Object> ip = Json.asObject(Json.asList(r.get("ips")).getFirst());
            assertEquals(0L, ((Number) ip.get("interface")).longValue());
            assertEquals("eth0", Json.asObject(Json.asList(r.get("interfaces")).getFirst()).get("name"));
        }
        if (!v.startsWith("0.1") && !v.startsWith("0.2") && !v.startsWith("0.3")) {
            w.ok("host-device", w.env("CHECK", "c1", c, "eth0"), conf(v, STATIC + ",\"prevResult\":" + Json.write(r)));
        }
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf(v, STATIC));
        assertRestored();
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf(v, STATIC));
    }

    /** The reference plugin's result for the same config and device, byte for byte (as parsed JSON). */
    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"})
    void resultMatchesTheReferencePlugin(String v) throws Exception {
        String c = w.container();
        for (String ipam : new String[] {"", ",\"ipam\":{\"type\":\"host-local\",\"dataDir\":\"" + w.dir.resolve("hl-" + v)
                + "\",\"ranges\":[[{\"subnet\":\"10.80.0.0/24\"}]],\"routes\":[{\"dst\":\"0.0.0.0/0\"}]},\"dns\":{\"nameservers\":[\"10.80.0.53\"]}"}) {
            // Each side its own host-local store, so both get the first address.
            String refConf = conf(v, ipam.replace("hl-" + v, "hl-ref-" + v));
            String ref = w.reference("host-device", w.env("ADD", "c1", c, "eth0"), refConf);
            String refRoutes = NetWorld.in(c, "ip", "route").out();
            String refAlias = String.valueOf(link(c, "eth0").get("ifalias"));
            w.reference("host-device", w.env("DEL", "c1", c, "eth0"), refConf);
            assertTrue(link(w.hostName, dev) != null, "the reference returned the device");
            Map<String, Object> ours = w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf(v, ipam));
            assertEquals(Json.write(Json.parseObject(ref)), Json.write(ours), ipam);
            assertEquals(refRoutes, NetWorld.in(c, "ip", "route").out());
            assertEquals(refAlias, link(c, "eth0").get("ifalias"));
            w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf(v, ipam));
        }
    }

    @Test
    void eitherPluginReturnsWhatTheOtherTook() throws Exception {
        String c = w.container();
        w.reference("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", ""));
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        Map<String, Object> l = link(w.hostName, dev);
        assertEquals(MAC, l.get("address"), "jcni returns the reference's device by its alias");
        assertEquals(null, l.get("ifalias"), "no saved state: the alias is cleared, as the reference's DEL does");
        configureDevice();

        w.ok("host-device", w.env("ADD", "c2", c, "eth0"), conf("1.0.0", ""));
        w.reference("host-device", w.env("DEL", "c2", c, "eth0"), conf("1.0.0", ""));
        assertTrue(link(w.hostName, dev) != null, "the reference returns jcni's device by its alias");
        // jcni's DEL afterwards finds the device home and puts back what the reference does not restore.
        w.ok("host-device", w.env("DEL", "c2", c, "eth0"), conf("1.0.0", ""));
        assertRestored();
        assertFalse(Files.exists(stateFile("c2", "eth0")));
    }

    @Test
    void delAfterTheNetnsIsGoneSaysTheVirtualDeviceIsLost() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", STATIC));
        w.deleteContainer(c);
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", STATIC));
        String log = w.stderr.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("device \"" + dev + "\" (MAC " + MAC + ") of attachment c1/eth0 cannot be returned"), log);
        assertTrue(log.contains("virtual device (kind veth), which the kernel deletes together with its namespace"), log);
        assertEquals(null, link(w.hostName, dev));
        // The kernel cleans up a dead namespace asynchronously; the pair goes with it.
        for (int i = 0; i < 200 && link(w.hostName, peer) != null; i++) sleep(50);
        assertEquals(null, link(w.hostName, peer), "the kernel deleted the whole pair");
        assertFalse(Files.exists(stateFile("c1", "eth0")));
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", STATIC));
    }

    /**
     * A physical device outlives its namespace: the kernel moves it to the initial namespace, keeping
     * its alias, under its container name. Simulated here by doing the same move by hand.
     */
    @Test
    void delAfterTheNetnsIsGoneTakesBackADeviceTheKernelReturned() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", STATIC));
        assertEquals(0, NetWorld.sh("ip", "-n", NetWorld.nsName(c), "link", "set", "eth0", "netns", w.hostName).rc());
        w.deleteContainer(c);
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", STATIC));
        assertRestored();
        assertEquals(null, link(w.hostName, "eth0"));
        assertTrue(w.stderr.toString(StandardCharsets.UTF_8).contains("was on the host as \"eth0\""), w.stderr.toString());
    }

    /** containerd removes a sandbox without CNI_NETNS when it lost track of the netns; the saved path is used. */
    @Test
    void delWithoutNetnsUsesTheSavedNetnsPath() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", STATIC));
        w.ok("host-device", w.env("DEL", "c1", null, "eth0"), conf("1.0.0", STATIC));
        assertRestored();
        assertEquals(null, link(c, "eth0"));
        assertFalse(Files.exists(stateFile("c1", "eth0")));
    }

    /** Something else took the device out of the container: DEL says so and succeeds. */
    @Test
    void delSaysWhenTheDeviceIsNeitherInTheContainerNorOnTheHost() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", ""));
        String other = w.container();
        assertEquals(0, NetWorld.sh("ip", "-n", NetWorld.nsName(c), "link", "set", "eth0", "netns", NetWorld.nsName(other)).rc());
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        String log = w.stderr.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("it is neither in its container netns " + c + " as \"eth0\" nor in this namespace"), log);
        assertFalse(Files.exists(stateFile("c1", "eth0")));
    }

    @Test
    void aFailedAddPutsTheDeviceBackAsItWas() {
        String c = w.container();
        String unreachable = ",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.78.0.2/24\"}],"
                + "\"routes\":[{\"dst\":\"10.79.0.0/16\",\"gw\":\"10.99.0.1\"}]}";
        Map<String, Object> err = w.fails("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", unreachable));
        assertTrue(String.valueOf(err.get("msg")).startsWith("failed to add route"), err.toString());
        assertRestored();
        assertEquals(null, link(c, "eth0"));
        assertFalse(Files.exists(stateFile("c1", "eth0")));
    }

    /** Errors as the reference words them: code and message, for the same configs. */
    @Test
    void errorsMatchTheReferencePlugin() throws Exception {
        String c = w.container();
        String base = "{\"cniVersion\":\"%s\",\"name\":\"hdnet\",\"type\":\"host-device\",\"dataDir\":\"" + dataDir + "\"%s}";
        String[][] cases = {
            {"1.0.0", ""},
            {"1.0.0", ",\"device\":\"nosuch0\""},
            {"1.0.0", ",\"hwaddr\":\"zz\""},
            {"1.0.0", ",\"hwaddr\":\"02:00:00:00:99:99\""},
            {"1.0.0", ",\"kernelpath\":\"/etc\""},
            {"1.0.0", ",\"kernelpath\":\"/sys/devices/nope\""},
            {"1.0.0", ",\"pciBusID\":\"0000:99:00.0\""},
            {"0.2.0", ",\"device\":\"" + dev + "\""},
            {"0.1.0", ",\"device\":\"" + dev + "\""},
        };
        for (String[] k : cases) {
            String conf = base.formatted(k[0], k[1]);
            Map<String, Object> ref = referenceError(w.env("ADD", "c1", c, "eth0"), conf);
            if (link(c, "eth0") != null) {
                // The reference fails 0.1.0/0.2.0 after moving the device and leaves it in the container.
                assertTrue(k[0].startsWith("0."), conf);
                w.reference("host-device", w.env("DEL", "c1", c, "eth0"), conf);
                configureDevice();
            }
            Map<String, Object> ours = w.fails("host-device", w.env("ADD", "c1", c, "eth0"), conf);
            assertEquals(ref.get("code"), ours.get("code"), conf);
            assertEquals(ref.get("msg"), ours.get("msg"), conf);
            assertRestored();
            assertEquals(null, link(c, "eth0"), "a failed ADD leaves nothing in the container");
        }
    }

    /** The reference plugin's error for a call that must fail. */
    private Map<String, Object> referenceError(Map<String, String> env, String conf) throws Exception {
        try {
            String out = w.reference("host-device", env, conf);
            throw new IllegalStateException("the reference succeeded: " + out);
        } catch (AssertionError e) {
            String m = e.getMessage();
            return Json.parseObject(m.substring(m.indexOf('{')));
        }
    }

    @Test
    void aMissingDeviceIsAClearError() {
        String c = w.container();
        String conf = conf("1.0.0", "").replace("\"device\":\"" + dev + "\"", "\"device\":\"nosuchdev0\"");
        Map<String, Object> err = w.fails("host-device", w.env("ADD", "c1", c, "eth0"), conf);
        assertEquals("failed to find host device: Link not found", err.get("msg"));
        assertEquals(999L, err.get("code"));
    }

    @Test
    void theContainerMayAlreadyHaveAnInterfaceWithTheHostName() {
        String c = w.container();
        assertEquals(0, NetWorld.sh("ip", "-n", NetWorld.nsName(c), "link", "add", dev, "type", "veth", "peer", "name", "x" + dev).rc());
        w.ok("host-device", w.env("ADD", "c1", c, "net1"), conf("1.0.0", ""));
        assertEquals(dev, link(c, "net1").get("ifalias"));
        // and the host may have one with the container's name
        host("link", "add", "net1", "type", "veth", "peer", "name", "net1p");
        w.ok("host-device", w.env("DEL", "c1", c, "net1"), conf("1.0.0", ""));
        assertRestored();
    }

    /** A DEL that cannot return the device leaves it as it found it, so the retry works. */
    @Test
    void aFailedDelLeavesTheDeviceInTheContainerForTheRetry() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.0.0", ""));
        host("link", "add", dev, "type", "veth", "peer", "name", "x" + dev);
        Map<String, Object> err = w.fails("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        assertEquals("failed to move \"" + dev + "\" to hostNS", err.get("msg"));
        Map<String, Object> in = link(c, "eth0");
        assertEquals(dev, in.get("ifalias"));
        assertTrue(Json.asList(in.get("flags")).contains("UP"));
        assertTrue(Files.exists(stateFile("c1", "eth0")));
        host("link", "del", dev);
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), conf("1.0.0", ""));
        assertRestored();
    }

    @Test
    void gcReturnsDevicesOfAttachmentsThatAreGone() {
        String c = w.container();
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), conf("1.1.0", STATIC));
        String gc = conf("1.1.0", STATIC).strip();
        String keep = gc.substring(0, gc.length() - 1) + ",\"cni.dev/valid-attachments\":[{\"containerID\":\"c1\",\"ifname\":\"eth0\"}]}";
        w.ok("host-device", w.env("GC", "", null, ""), keep);
        assertNotEquals(null, link(c, "eth0"));
        String none = gc.substring(0, gc.length() - 1) + ",\"cni.dev/valid-attachments\":[]}";
        w.ok("host-device", w.env("GC", "", null, ""), none);
        assertRestored();
        assertEquals(null, link(c, "eth0"));
        assertFalse(Files.exists(stateFile("c1", "eth0")));
        w.ok("host-device", w.env("STATUS", "", null, ""), gc);
    }

    @Test
    void devicesAreFoundByHwaddrPciBusIdKernelpathAndDeviceId(@TempDir Path root) throws Exception {
        String c = w.container();
        String byMac = conf("1.0.0", "").replace("\"device\":\"" + dev + "\"", "\"hwaddr\":\"" + MAC.toUpperCase(Locale.ROOT) + "\"");
        w.ok("host-device", w.env("ADD", "c1", c, "eth0"), byMac);
        w.ok("host-device", w.env("DEL", "c1", c, "eth0"), byMac);
        assertRestored();

        // A fake sysfs: a PCI device whose net directory names our veth.
        Path pciDev = Files.createDirectories(root.resolve("sys/devices/pci0000:00/0000:00:09.0"));
        Files.createDirectories(pciDev.resolve("net").resolve(dev));
        Path drv = Files.createDirectories(root.resolve("sys/bus/pci/drivers/e1000e"));
        Files.createSymbolicLink(pciDev.resolve("driver"), drv);
        Files.createDirectories(root.resolve("sys/bus/pci/devices"));
        Files.createSymbolicLink(root.resolve("sys/bus/pci/devices/0000:00:09.0"), pciDev);
        HostDevice plugin = new HostDevice(new Sysfs(root));
        for (String sel : new String[] {"\"pciBusID\":\"0000:00:09.0\"", "\"kernelpath\":\"/sys/devices/pci0000:00/0000:00:09.0\"",
            "\"device\":\"ignored\",\"runtimeConfig\":{\"deviceID\":\"0000:00:09.0\"}"}) {
            String conf = conf("1.0.0", "").replace("\"device\":\"" + dev + "\"", sel);
            if (sel.contains("deviceID")) conf = conf.replace("\"device\":\"ignored\",", "");
            Skel.Outcome add = run(plugin, "ADD", c, conf);
            assertEquals(0, add.exitCode(), sel + ": " + add.stdout() + w.stderr);
            assertEquals(dev, link(c, "eth0").get("ifalias"), sel);
            assertEquals(0, run(plugin, "DEL", c, conf).exitCode(), sel);
            assertRestored();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Skel.Outcome run(HostDevice plugin, String cmd, String c, String conf) {
        return w.host.run(() -> Skel.run(() -> plugin, w.env(cmd, "c1", c, "eth0"), conf.getBytes(StandardCharsets.UTF_8),
                PluginRegistry.context(new PrintStream(w.stderr, true, StandardCharsets.UTF_8))));
    }

    @Test
    void typeIsRegistered() {
        assertTrue(PluginRegistry.types().contains("host-device"));
    }
}
