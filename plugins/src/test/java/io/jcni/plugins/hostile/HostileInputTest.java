package io.jcni.plugins.hostile;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Hostile values that used to end as code 999 with a stack trace now get the
 * spec's codes (6 for what cannot be decoded, 7 for an invalid config), and DEL still works.
 */
@Tag("root")
class HostileInputTest {
    private NetWorld w;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("static");
        w.jcniLauncher("host-local");
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    private String prev(String ips) {
        return "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":\"/x\"}],\"ips\":" + ips + "}";
    }

    private long code(String type, Map<String, String> env, String conf) {
        var o = w.run(type, env, conf);
        if (o.exitCode() == 0) return 0;
        long code = ((Number) Json.parseObject(o.stdout()).get("code")).longValue();
        assertFalse(o.stdout().contains("\tat "), o.stdout());
        return code;
    }

    private static String portmap(String prev) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true},"
                + "\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"}]}," + prev + "}";
    }

    @Test
    void anOutOfRangeInterfaceIndexIsCode6AndDelStillWorks() {
        String c = w.container();
        String bigIf = prev("[{\"address\":\"10.1.0.2/24\",\"interface\":99999999999}]");
        Map<String, String> confs = Map.of(
                "portmap", portmap(bigIf),
                "firewall", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"dataDir\":\"" + w.dir.resolve("fw") + "\"," + bigIf + "}",
                "bandwidth", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bandwidth\",\"ingressRate\":1000000,\"ingressBurst\":100000," + bigIf + "}",
                "sbr", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"sbr\"," + bigIf + "}",
                "tuning", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"tuning\"," + bigIf + "}");
        confs.forEach((type, conf) -> {
            assertEquals(6, code(type, w.env("ADD", "c1", c, "eth0"), conf), type + " ADD");
            assertEquals(6, code(type, w.env("CHECK", "c1", c, "eth0"), conf), type + " CHECK");
            assertEquals(0, code(type, w.env("DEL", "c1", c, "eth0"), conf), type + " DEL");
        });
    }

    @Test
    void aPrevResultAddressWithoutAValidPrefixIsCode6AndDelStillWorks() {
        String c = w.container();
        for (String addr : new String[] {"10.1.0.2", "10.1.0.2/33", "fd00::2/129", "10.1.0.2/-1"}) {
            String conf = portmap(prev("[{\"address\":\"" + addr + "\",\"interface\":0}]"));
            assertEquals(6, code("portmap", w.env("ADD", "c1", c, "eth0"), conf), addr);
            assertEquals(0, code("portmap", w.env("DEL", "c1", c, "eth0"), conf), addr);
        }
    }

    @Test
    void bridgeAndInterfaceNamesOutsidePrintableAsciiAreRefused() {
        String c = w.container();
        for (String br : new String[] {"br\u0000x", "br\u00e9", "\u00e9".repeat(8), "a/b", "a b"}) {
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\",\"bridge\":" + Json.write(br)
                    + ",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.9.0.2/24\"}]}}";
            assertEquals(7, code("bridge", w.env("ADD", "c1", c, "eth0"), conf), Json.write(br));
        }
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\",\"bridge\":\"jbx0\""
                + ",\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.9.0.2/24\"}]}}";
        assertEquals(4, code("bridge", w.env("ADD", "c1", c, "\u00e9th0"), conf));
        assertEquals(4, code("bridge", w.env("DEL", "c1", c, "\u00e9th0"), conf));
        assertNotEquals(0, NetWorld.in(w.hostName, "ip", "link", "show", "jbx0").rc(), "nothing was created");
    }

    @Test
    void firewallBridgeNamesThatLookLikeNftWildcardsAreTakenLiterally() {
        String c = w.container();
        for (String br : new String[] {"*", "br*", "a*b"}) {
            String fw = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"ingressPolicy\":\"same-bridge\","
                    + "\"dataDir\":\"" + w.dir.resolve("fw") + "\",\"prevResult\":{\"cniVersion\":\"1.0.0\","
                    + "\"interfaces\":[{\"name\":" + Json.write(br) + "},{\"name\":\"eth0\",\"sandbox\":\"/x\"}],"
                    + "\"ips\":[{\"address\":\"10.1.0.2/24\",\"interface\":1}]}}";
            assertEquals(0, code("firewall", w.env("ADD", "c1", c, "eth0"), fw), br);
            assertEquals(0, code("firewall", w.env("DEL", "c1", c, "eth0"), fw), br);
        }
        String set = NetWorld.in(w.hostName, "nft", "list", "set", "inet", "jcni", "fw_iso").out();
        assertTrue(set.contains("\"*\"") && set.contains("\"br*\"") && set.contains("\"a*b\""), set);
        String bad = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"ingressPolicy\":\"same-bridge\","
                + "\"dataDir\":\"" + w.dir.resolve("fw") + "\",\"prevResult\":{\"cniVersion\":\"1.0.0\","
                + "\"interfaces\":[{\"name\":\"a\\\"b\"},{\"name\":\"eth0\",\"sandbox\":\"/x\"}],"
                + "\"ips\":[{\"address\":\"10.1.0.2/24\",\"interface\":1}]}}";
        assertEquals(7, code("firewall", w.env("ADD", "c1", c, "eth0"), bad));
    }

    /** nft cannot quote chain names, so a keyword is refused, and DEL never renders it. */
    @Test
    void firewallAdminChainsThatAreNftKeywordsAreCode7AndLeaveNoState() throws Exception {
        String c = w.container();
        java.nio.file.Path state = w.dir.resolve("fw5");
        for (String chain : new String[] {"drop", "accept", "return", "counter", "ip", "chain", "th"}) {
            String fw = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"iptablesAdminChainName\":\"" + chain + "\","
                    + "\"dataDir\":\"" + state + "\"," + prev("[{\"address\":\"10.1.0.2/24\",\"interface\":0}]") + "}";
            assertEquals(7, code("firewall", w.env("ADD", "c1", c, "eth0"), fw), chain);
            assertEquals(0, code("firewall", w.env("DEL", "c1", c, "eth0"), fw), chain + ": DEL works whatever the config");
        }
        try (var files = java.nio.file.Files.walk(state)) {
            assertEquals(java.util.List.of(), files.filter(java.nio.file.Files::isRegularFile)
                    .filter(f -> f.toString().contains("/att/") || f.toString().contains("/key/")).toList(), "no state left");
        } catch (java.nio.file.NoSuchFileException e) {
            // nothing was ever written
        }
        // A lower-case name that is no keyword still works, and so does DEL after an ADD that nft refused.
        String ok = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"iptablesAdminChainName\":\"my_admin\","
                + "\"dataDir\":\"" + state + "\"," + prev("[{\"address\":\"10.1.0.2/24\",\"interface\":0}]") + "}";
        assertEquals(0, code("firewall", w.env("ADD", "c1", c, "eth0"), ok));
        assertTrue(NetWorld.in(w.hostName, "nft", "list", "chain", "inet", "jcni", "my_admin").rc() == 0);
        assertEquals(0, code("firewall", w.env("DEL", "c1", c, "eth0"), ok));
    }

    /** A 4,096-character container ID (the reference accepts it) works with firewall and portmap. */
    @Test
    void aVeryLongContainerIdWorksWithFirewallAndPortmap() {
        String c = w.container();
        String cid = "c".repeat(4096);
        String p = prev("[{\"address\":\"10.1.0.2/24\",\"interface\":0}]");
        String fw = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"firewall\",\"dataDir\":\"" + w.dir.resolve("fw7") + "\"," + p + "}";
        String pm = portmap(p).replace("\"type\":\"portmap\",", "\"type\":\"portmap\",\"dataDir\":\"" + w.dir.resolve("pm7") + "\",");
        for (String[] t : new String[][] {{"firewall", fw}, {"portmap", pm}}) {
            assertEquals(0, code(t[0], w.env("ADD", cid, c, "eth0"), t[1]), t[0] + " ADD");
            assertEquals(0, code(t[0], w.env("DEL", cid, c, "eth0"), t[1]), t[0] + " DEL");
        }
    }
}
