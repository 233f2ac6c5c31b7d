package io.jcni.plugins.main.bridge;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The bridge plugin in real namespaces: a private "host" netns with containers attached to its bridge. */
@Tag("root")
class BridgeTest {
    private NetWorld w;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("static");
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    static String staticConf(String version, String address, String extra) {
        return """
            {"cniVersion":"%s","name":"tnet","type":"bridge","bridge":"tbr0","isGateway":true%s,
             "ipam":{"type":"static","addresses":[{"address":"%s","gateway":"10.50.0.1"}],"routes":[{"dst":"10.99.0.0/16"}],
                     "dns":{"nameservers":["10.50.0.53"]}}}
            """.formatted(version, extra, address);
    }

    String hostLocalConf(String version, String dataDir, String extra) {
        return """
            {"cniVersion":"%s","name":"tnet","type":"bridge","bridge":"tbr0","isGateway":true,"isDefaultGateway":true%s,
             "ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"10.51.0.0/24"}],[{"subnet":"fd51::/64"}]],
                     "routes":[{"dst":"10.99.0.0/16"}]}}
            """.formatted(version, extra, w.dir.resolve(dataDir));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void twoContainersPingEachOtherAndTheHost(String version) {
        String c1 = w.container();
        String c2 = w.container();
        String conf1 = staticConf(version, "10.50.0.2/24", "");
        String conf2 = staticConf(version, "10.50.0.3/24", "");
        Map<String, Object> r1 = w.ok("bridge", w.env("ADD", "c1", c1, "eth0"), conf1);
        w.ok("bridge", w.env("ADD", "c2", c2, "eth0"), conf2);

        assertEquals(version, r1.get("cniVersion"));
        List<Object> ifs = Json.asList(r1.get("interfaces"));
        assertEquals(3, ifs.size());
        assertEquals("tbr0", Json.asObject(ifs.get(0)).get("name"));
        assertTrue(((String) Json.asObject(ifs.get(1)).get("name")).matches("veth[0-9a-f]{8}"));
        assertEquals(Map.of("name", "eth0", "mac", Json.asObject(ifs.get(2)).get("mac"), "sandbox", c1), Json.asObject(ifs.get(2)));
        Map<String, Object> ip = Json.asObject(Json.asList(r1.get("ips")).get(0));
        assertEquals(2L, ((Number) ip.get("interface")).longValue());
        assertEquals("10.50.0.2/24", ip.get("address"));

        assertTrue(NetWorld.ping(c1, "10.50.0.3"), "c1 -> c2");
        assertTrue(NetWorld.ping(c2, "10.50.0.2"), "c2 -> c1");
        assertTrue(NetWorld.ping(w.hostName, "10.50.0.2"), "host -> c1 via the gateway on the bridge");
        assertTrue(NetWorld.in(w.hostName, "ip", "-4", "addr", "show", "tbr0").out().contains("10.50.0.1/24"));
        assertTrue(NetWorld.in(c1, "ip", "route").out().contains("10.99.0.0/16 via 10.50.0.1 dev eth0"));

        for (int i = 0; i < 2; i++) {
            w.ok("bridge", w.env("DEL", "c1", c1, "eth0"), conf1);
            w.ok("bridge", w.env("DEL", "c2", c2, "eth0"), conf2);
        }
        assertNotEquals(0, NetWorld.in(c1, "ip", "link", "show", "eth0").rc());
        assertFalse(NetWorld.in(w.hostName, "ip", "-o", "link", "show", "type", "veth").out().contains("veth"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0"})
    void legacyVersionsGetALegacyResult(String version) {
        String c1 = w.container();
        String conf = staticConf(version, "10.50.0.2/24", "");
        Map<String, Object> r = w.ok("bridge", w.env("ADD", "c1", c1, "eth0"), conf);
        assertEquals(version, r.get("cniVersion"));
        assertEquals("10.50.0.2/24", Json.asObject(r.get("ip4")).get("ip"));
        assertNull(r.get("interfaces"));
        w.ok("bridge", w.env("DEL", "c1", c1, "eth0"), conf);
    }

    /** The reference plugin and ours, same config and IPAM, print the same result but for MACs and veth names. */
    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"})
    void resultMatchesTheReferencePlugin(String version) throws Exception {
        String c = w.container();
        String refConf = hostLocalConf(version, "ref", "");
        String ref = w.reference("bridge", w.env("ADD", "c1", c, "eth0"), refConf);
        w.reference("bridge", w.env("DEL", "c1", c, "eth0"), refConf);
        String ourConf = hostLocalConf(version, "ours", "");
        Map<String, Object> ours = w.ok("bridge", w.env("ADD", "c1", c, "eth0"), ourConf);
        assertEquals(NetWorld.normalize(Json.parseObject(ref)), NetWorld.normalize(ours));
        assertTrue(NetWorld.ping(w.hostName, "10.51.0.2"));
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), ourConf);
    }

    @Test
    void delSucceedsWhenTheNetnsIsGoneAndReleasesTheAddress() throws Exception {
        String c = w.container();
        String conf = hostLocalConf("1.0.0", "data", "");
        w.ok("bridge", w.env("ADD", "c1", c, "eth0"), conf);
        assertTrue(Files.exists(w.dir.resolve("data/tnet/10.51.0.2")));
        w.deleteContainer(c);
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), conf);
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), conf);
        assertFalse(Files.exists(w.dir.resolve("data/tnet/10.51.0.2")));
        Map<String, String> noNetns = w.env("DEL", "c1", null, "eth0");
        w.ok("bridge", noNetns, conf);
    }

    @Test
    void checkPassesAfterAddAndFailsWithoutTheAddress() {
        String c = w.container();
        String conf = staticConf("1.0.0", "10.50.0.2/24", ",\"isDefaultGateway\":true");
        Map<String, Object> r = w.ok("bridge", w.env("ADD", "c1", c, "eth0"), conf);
        String withPrev = withPrevResult(conf, r);
        w.ok("bridge", w.env("CHECK", "c1", c, "eth0"), withPrev);
        assertEquals(0, NetWorld.in(c, "ip", "addr", "del", "10.50.0.2/24", "dev", "eth0").rc());
        Map<String, Object> err = w.fails("bridge", w.env("CHECK", "c1", c, "eth0"), withPrev);
        assertTrue(((String) err.get("msg")).contains("10.50.0.2/24"), err.toString());
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), conf);
    }

    static String withPrevResult(String conf, Map<String, Object> result) {
        Map<String, Object> m = new HashMap<>(Json.parseObject(conf));
        m.put("prevResult", result);
        return Json.write(m);
    }

    @Test
    void layer2OnlyWithoutIpam() {
        String c = w.container();
        String conf = """
            {"cniVersion":"1.0.0","name":"l2","type":"bridge","bridge":"l2br","hairpinMode":true,"portIsolation":true,"mtu":1400}
            """;
        Map<String, Object> r = w.ok("bridge", w.env("ADD", "c1", c, "eth0"), conf);
        assertNull(r.get("ips"));
        assertTrue(NetWorld.in(c, "ip", "link", "show", "eth0").out().contains("state UP"));
        assertTrue(NetWorld.in(c, "ip", "link", "show", "eth0").out().contains("mtu 1400"));
        String veth = (String) Json.asObject(Json.asList(r.get("interfaces")).get(1)).get("name");
        String port = NetWorld.in(w.hostName, "bridge", "-d", "link", "show", "dev", veth).out();
        assertTrue(port.contains("hairpin on"), port);
        assertTrue(port.contains("isolated on"), port);
        w.ok("bridge", w.env("CHECK", "c1", c, "eth0"), withPrevResult(conf, r));
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), conf);

        String disabled = """
            {"cniVersion":"1.0.0","name":"l2","type":"bridge","bridge":"l2br","disableContainerInterface":true}
            """;
        w.ok("bridge", w.env("ADD", "c1", c, "eth0"), disabled);
        assertTrue(NetWorld.in(c, "ip", "link", "show", "eth0").out().contains("state DOWN"));
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), disabled);
    }

    @Test
    void macFromRuntimeConfig() {
        String c = w.container();
        String conf = staticConf("1.0.0", "10.50.0.2/24", ",\"runtimeConfig\":{\"mac\":\"0a:58:0a:32:00:02\"}");
        Map<String, Object> r = w.ok("bridge", w.env("ADD", "c1", c, "eth0"), conf);
        assertEquals("0a:58:0a:32:00:02", Json.asObject(Json.asList(r.get("interfaces")).get(2)).get("mac"));
        w.ok("bridge", w.env("DEL", "c1", c, "eth0"), conf);
    }

    /**
     * An "outside" host beyond the test host, with no route back to the bridge's subnet: a container
     * reaches it only with ipMasq. DEL and GC remove the container's masquerading.
     */
    @Test
    void ipMasqReachesNetworksWithoutARouteBack() throws Exception {
        String out = w.container();
        NetWorld.sh("ip", "-n", w.hostName, "link", "add", "jbout0", "type", "veth", "peer", "name", "eth0", "netns", NetWorld.nsName(out));
        NetWorld.sh("ip", "-n", w.hostName, "addr", "add", "192.168.78.1/24", "dev", "jbout0");
        NetWorld.sh("ip", "-n", w.hostName, "link", "set", "jbout0", "up");
        NetWorld.sh("ip", "-n", NetWorld.nsName(out), "addr", "add", "192.168.78.2/24", "dev", "eth0");
        NetWorld.sh("ip", "-n", NetWorld.nsName(out), "link", "set", "eth0", "up");
        String conf = """
            {"cniVersion":"1.1.0","name":"tnet","type":"bridge","bridge":"tbr0","isGateway":true,"ipMasq":%s,"dataDir":"%s",
             "ipam":{"type":"static","addresses":[{"address":"%s","gateway":"10.50.0.1"}],"routes":[{"dst":"192.168.78.0/24"}]}}
            """;
        String state = w.dir.resolve("nft").toString();
        String plain = w.container();
        w.ok("bridge", w.env("ADD", "plain", plain, "eth0"), conf.formatted("false", state, "10.50.0.3/24"));
        assertFalse(NetWorld.ping(plain, "192.168.78.2"), "no route back without masquerade");

        String masq = w.container();
        String masqConf = conf.formatted("true", state, "10.50.0.2/24");
        w.ok("bridge", w.env("ADD", "masq", masq, "eth0"), masqConf);
        assertTrue(NetWorld.ping(masq, "192.168.78.2"), "masqueraded");
        assertTrue(NetWorld.in(w.hostName, "nft", "list", "set", "inet", "jcni", "mq4_24").out().contains("10.50.0.2"));

        w.ok("bridge", w.env("DEL", "masq", masq, "eth0"), masqConf);
        w.ok("bridge", w.env("DEL", "masq", masq, "eth0"), masqConf);
        assertFalse(NetWorld.in(w.hostName, "nft", "list", "set", "inet", "jcni", "mq4_24").out().contains("10.50.0.2"));

        w.ok("bridge", w.env("ADD", "masq", masq, "eth0"), masqConf);
        Map<String, String> gc = new HashMap<>(w.env("GC", "", null, ""));
        gc.remove("CNI_CONTAINERID");
        gc.remove("CNI_IFNAME");
        w.ok("bridge", gc, masqConf.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[],"));
        assertFalse(NetWorld.in(w.hostName, "nft", "list", "set", "inet", "jcni", "mq4_24").out().contains("10.50.0.2"), "GC");
    }

    /** IDs and names the reference accepts fit the link alias (hashed when too long) and GC still works. */
    @Test
    void longContainerIdsAndNetworkNamesWorkAndAreCollected() throws Exception {
        w.jcniLauncher("host-local");
        String c1 = w.container();
        String net = "n".repeat(200);
        String cid = "c".repeat(250);
        String conf = hostLocalConf("1.1.0", "data", "").replace("\"name\":\"tnet\"", "\"name\":\"" + net + "\"");
        w.ok("bridge", w.env("ADD", cid, c1, "eth0"), conf);
        assertTrue(NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out().contains("alias jcni#"));

        Map<String, String> gc = new HashMap<>(w.env("GC", "", null, ""));
        gc.remove("CNI_CONTAINERID");
        gc.remove("CNI_IFNAME");
        w.ok("bridge", gc, conf.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[{\"containerID\":\"" + cid + "\",\"ifname\":\"eth0\"}],"));
        assertTrue(NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out().contains("alias jcni#"), "kept while valid");
        w.ok("bridge", gc, conf.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[],"));
        assertFalse(NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out().contains("alias jcni#"), "collected");
        assertNotEquals(0, NetWorld.in(c1, "ip", "link", "show", "eth0").rc(), "its container end went with it");
        w.ok("bridge", w.env("DEL", cid, c1, "eth0"), conf);
    }

    /** GC removes the host veth (and with it the container end) and the address of every attachment not listed as valid. */
    @Test
    void gcRemovesWhatBelongsToAttachmentsThatAreGone() throws Exception {
        w.jcniLauncher("host-local");
        String c1 = w.container();
        String c2 = w.container();
        String conf = hostLocalConf("1.1.0", "data", "");
        w.ok("bridge", w.env("ADD", "c1", c1, "eth0"), conf);
        w.ok("bridge", w.env("ADD", "c2", c2, "eth0"), conf);
        assertTrue(NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out().contains("alias jcni/tnet/c1/eth0"));

        String gcConf = conf.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[{\"containerID\":\"c2\",\"ifname\":\"eth0\"}],");
        Map<String, String> gc = new HashMap<>(w.env("GC", "", null, ""));
        gc.remove("CNI_CONTAINERID");
        gc.remove("CNI_IFNAME");

        // A GC that does not list the valid attachments changes nothing.
        assertEquals(7L, w.fails("bridge", gc, conf).get("code"));
        String before = NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out();
        assertTrue(before.contains("jcni/tnet/c1/eth0") && before.contains("jcni/tnet/c2/eth0"), before);
        assertTrue(Files.exists(w.dir.resolve("data/tnet/10.51.0.2")) && Files.exists(w.dir.resolve("data/tnet/10.51.0.3")));

        w.ok("bridge", gc, gcConf);

        String veths = NetWorld.in(w.hostName, "ip", "-d", "link", "show", "type", "veth").out();
        assertFalse(veths.contains("jcni/tnet/c1/eth0"), veths);
        assertTrue(veths.contains("jcni/tnet/c2/eth0"), veths);
        assertFalse(NetWorld.in(c1, "ip", "link", "show", "eth0").rc() == 0, "c1's eth0 went with its peer");
        assertFalse(Files.exists(w.dir.resolve("data/tnet/10.51.0.2")), "c1's address released");
        assertTrue(Files.exists(w.dir.resolve("data/tnet/10.51.0.3")), "c2's address kept");
    }

    @Test
    void gcAndStatusGoToTheIpamPlugin() throws Exception {
        w.script("fakeipam", "#!/bin/sh\necho \"$CNI_COMMAND\" >> " + w.dir.resolve("calls") + "\ncat > " + w.dir.resolve("stdin") + "\n");
        String conf = """
            {"cniVersion":"1.1.0","name":"tnet","type":"bridge","ipam":{"type":"fakeipam"},
             "cni.dev/valid-attachments":[{"containerID":"c1","ifname":"eth0"}]}
            """;
        Map<String, String> gc = new HashMap<>(w.env("GC", "", null, ""));
        gc.remove("CNI_CONTAINERID");
        gc.remove("CNI_IFNAME");
        w.ok("bridge", gc, conf);
        Map<String, String> status = new HashMap<>(gc);
        status.put("CNI_COMMAND", "STATUS");
        w.ok("bridge", status, conf);
        assertEquals("GC\nSTATUS\n", Files.readString(w.dir.resolve("calls")));
        assertTrue(Files.readString(w.dir.resolve("stdin")).contains("valid-attachments"));
    }

    @Test
    void badConfigsNameTheKey() {
        String c = w.container();
        Map<String, Object> e = w.fails("bridge", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.50.0.2/24", ",\"mtu\":\"big\""));
        assertTrue(e.get("msg").toString().contains("mtu"), e.toString());
        e = w.fails("bridge", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.50.0.2/24", ",\"ipMasq\":\"yes\""));
        assertTrue(e.toString().contains("ipMasq"), e.toString());
        e = w.fails("bridge", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.50.0.2/24", ",\"vlan\":5000"));
        assertTrue(e.get("msg").toString().contains("invalid VLAN ID 5000"), e.toString());
        e = w.fails("bridge", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.50.0.2/24", ",\"vlan\":100"));
        assertTrue(e.get("msg").toString().startsWith("vlan"), e.toString());
        e = w.fails("bridge", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.50.0.2/24", ",\"macspoofchk\":1"));
        assertTrue(e.toString().contains("macspoofchk"), e.toString());
        // Nothing was created by the refused ADDs.
        assertNotEquals(0, NetWorld.in(c, "ip", "link", "show", "eth0").rc());
    }
}
