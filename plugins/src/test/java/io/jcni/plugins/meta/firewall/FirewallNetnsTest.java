package io.jcni.plugins.meta.firewall;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.Topology;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FirewallNetnsTest {
    @TempDir
    Path tmp;
    Topology w;
    String a1;
    String a2;
    String b1;

    @AfterEach
    void cleanup() {
        if (w != null) w.close();
    }

    /** Two bridges: br0 with a1 (server) and a2, br1 with b1. */
    void world() throws Exception {
        w = new Topology();
        w.bridge("br0", "10.80.0.1/24");
        w.bridge("br1", "10.81.0.1/24");
        a1 = w.container("a1", "br0", new String[] {"10.80.0.2/24"}, new String[] {"10.80.0.1"});
        a2 = w.container("a2", "br0", new String[] {"10.80.0.3/24"}, new String[] {"10.80.0.1"});
        b1 = w.container("b1", "br1", new String[] {"10.81.0.2/24"}, new String[] {"10.81.0.1"});
        w.httpd(a1, 80, "a1", tmp.resolve("www"));
    }

    String conf(String bridge, String ns, String ip, String extra) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"fw\",\"type\":\"firewall\",\"dataDir\":\"" + tmp.resolve("state") + "\"" + extra
                + ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"" + bridge + "\"},{\"name\":\"eth0\",\"sandbox\":\""
                + ns + "\"}],\"ips\":[{\"address\":\"" + ip + "\",\"interface\":1}]}}";
    }

    Map<String, Object> call(String cmd, String id, String conf) {
        return w.hostNs.run(() -> new PluginCall("firewall").env("CNI_CONTAINERID", id).ok(cmd, conf));
    }

    @Test
    void configErrors() {
        String base = "{\"cniVersion\":\"1.0.0\",\"name\":\"fw\",\"type\":\"firewall\"";
        assertThrows(CniException.class, () -> FirewallConfig.parse(Json.parseObject(base + ",\"backend\":\"pf\"}")));
        CniException e = assertThrows(CniException.class, () -> FirewallConfig.parse(Json.parseObject(base + ",\"ingressPolicy\":\"closed\"}")));
        assertEquals(7, e.code());
        assertTrue(e.details().startsWith("ingressPolicy"));
        assertTrue(FirewallConfig.parse(Json.parseObject(base + ",\"backend\":\"firewalld\",\"ingressPolicy\":\"same-bridge\"}")).sameBridge());
        assertEquals(7L, new PluginCall("firewall").fails("ADD", base + "}").get("code"));
    }

    @Test
    @Tag("root")
    void openPolicyAllowsAndTracksAddresses() throws Exception {
        world();
        call("ADD", "a1", conf("br0", w.nsPath(a1), "10.80.0.2/24", ""));
        call("ADD", "b1", conf("br1", w.nsPath(b1), "10.81.0.2/24", ",\"ingressPolicy\":\"open\""));
        assertEquals("a1", w.curl(b1, "http://10.80.0.2/"), "open: other bridges may reach the container");
        String set = w.nft("list", "set", "inet", "jcni", "fw4");
        assertTrue(set.contains("10.80.0.2") && set.contains("10.81.0.2"), set);
        call("CHECK", "a1", conf("br0", w.nsPath(a1), "10.80.0.2/24", ""));
        call("DEL", "a1", "{\"cniVersion\":\"1.0.0\",\"name\":\"fw\",\"type\":\"firewall\",\"dataDir\":\"" + tmp.resolve("state") + "\"}");
        call("DEL", "a1", conf("br0", w.nsPath(a1), "10.80.0.2/24", ""));
        set = w.nft("list", "set", "inet", "jcni", "fw4");
        assertFalse(set.contains("10.80.0.2"), set);
        w.hostNs.run(() -> new PluginCall("firewall").env("CNI_CONTAINERID", "a1").fails("CHECK", conf("br0", w.nsPath(a1), "10.80.0.2/24", "")));
        // The admin chain exists and is jumped to before the allow rules.
        assertTrue(w.nft("list", "chain", "inet", "jcni", "fw_forward").contains("jump CNI-ADMIN"));
    }

    @Test
    @Tag("root")
    void sameBridgeBlocksOtherBridgesButNotTheHostOrTheSameBridge() throws Exception {
        world();
        assertEquals("a1", w.curl(b1, "http://10.80.0.2/"));
        call("ADD", "a1", conf("br0", w.nsPath(a1), "10.80.0.2/24", ",\"ingressPolicy\":\"same-bridge\""));
        call("ADD", "b1", conf("br1", w.nsPath(b1), "10.81.0.2/24", ",\"ingressPolicy\":\"same-bridge\""));
        assertNull(w.curl(b1, "http://10.80.0.2/"), "from another isolated bridge: dropped");
        assertEquals("a1", w.curl(a2, "http://10.80.0.2/"), "same bridge");
        assertEquals("a1", w.curl(w.host, "http://10.80.0.2/"), "the host");
        String gc = "{\"cniVersion\":\"1.1.0\",\"name\":\"fw\",\"type\":\"firewall\",\"dataDir\":\"" + tmp.resolve("state") + "\","
                + "\"cni.dev/valid-attachments\":[{\"containerID\":\"a1\",\"ifname\":\"eth0\"}]}";
        w.hostNs.run(() -> new PluginCall("firewall").ok("GC", gc));
        String set = w.nft("list", "set", "inet", "jcni", "fw4");
        assertTrue(set.contains("10.80.0.2") && !set.contains("10.81.0.2"), set);
    }
}
