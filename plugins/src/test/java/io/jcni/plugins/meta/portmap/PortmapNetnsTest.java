package io.jcni.plugins.meta.portmap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.Topology;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.Json;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * portmap end to end in a private world: host namespace with bridge br0 (10.77.0.1/24,
 * fd77::1/64), containers c1 (.2, server) and c2 (.3, client). The plugin runs on the host
 * namespace's thread, so nft acts there; curl runs only inside these namespaces.
 */
@Tag("root")
class PortmapNetnsTest {
    @TempDir
    Path tmp;
    Topology w;
    String c1;
    String c2;

    @BeforeEach
    void world() throws Exception {
        w = new Topology();
        w.bridge("br0", "10.77.0.1/24", "fd77::1/64");
        c1 = w.container("c1", "br0", new String[] {"10.77.0.2/24", "fd77::2/64"}, new String[] {"10.77.0.1", "fd77::1"});
        c2 = w.container("c2", "br0", new String[] {"10.77.0.3/24", "fd77::3/64"}, new String[] {"10.77.0.1", "fd77::1"});
        // What the bridge plugin's hairpinMode does: with br_netfilter, a DNAT back to the port the packet came
        // from is bridged, not routed, so that port must allow hairpin (the same holds for the Go plugin).
        Topology.sh("ip", "-n", w.host, "link", "set", "vc1", "type", "bridge_slave", "hairpin", "on");
        w.httpd(c1, 80, "hello-c1", tmp.resolve("www"));
    }

    @AfterEach
    void cleanup() {
        if (w != null) w.close();
    }

    String conf(String mappings, String extra) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"pmnet\",\"type\":\"portmap\",\"dataDir\":\"" + tmp.resolve("state") + "\""
                + extra + ",\"runtimeConfig\":{\"portMappings\":" + mappings + "},"
                + "\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"br0\"},{\"name\":\"vc1\"},"
                + "{\"name\":\"eth0\",\"sandbox\":\"" + w.nsPath(c1) + "\"}],"
                + "\"ips\":[{\"address\":\"10.77.0.2/24\",\"gateway\":\"10.77.0.1\",\"interface\":2},"
                + "{\"address\":\"fd77::2/64\",\"gateway\":\"fd77::1\",\"interface\":2}]}}";
    }

    Map<String, Object> call(String cmd, String id, String conf) {
        return w.hostNs.run(() -> new PluginCall("portmap").env("CNI_CONTAINERID", id).env("CNI_NETNS", w.nsPath(c1)).ok(cmd, conf));
    }

    static final String MAP_8080 = "[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"}]";

    @Test
    void reachableFromHostLocalhostNeighbourAndItselfUntilDel() throws Exception {
        String conf = conf(MAP_8080, "");
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"), "nothing mapped yet");

        Map<String, Object> out = call("ADD", "ctr1", conf);
        Map<String, Object> prev = Json.asObject(Json.parseObject(conf).get("prevResult"));
        assertEquals(prev.get("ips"), out.get("ips"), "returns prevResult");
        assertEquals(prev.get("interfaces"), out.get("interfaces"), "returns prevResult");

        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"), "host -> host IP");
        assertEquals("hello-c1", w.curl(w.host, "http://127.0.0.1:8080/"), "host -> localhost (route_localnet + masquerade)");
        assertEquals("hello-c1", w.curl(c2, "http://10.77.0.1:8080/"), "neighbour on the same bridge");
        assertEquals("hello-c1", w.curl(c1, "http://10.77.0.1:8080/"), "hairpin: itself through the host port");
        assertEquals("hello-c1", w.curl(w.host, "http://[fd77::1]:8080/"), "IPv6 host IP");
        assertEquals("hello-c1", w.curl(c2, "http://[fd77::1]:8080/"), "IPv6 neighbour");
        assertEquals("1", Topology.sh("ip", "netns", "exec", w.host, "sysctl", "-n", "net.ipv4.conf.br0.route_localnet").strip());

        call("CHECK", "ctr1", conf);
        call("DEL", "ctr1", conf);
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
        assertNull(w.curl(c2, "http://10.77.0.1:8080/"));
        assertNull(w.curl(w.host, "http://[fd77::1]:8080/"));
        String table = w.nft("list", "table", "inet", "jcni");
        assertFalse(table.contains("10.77.0.2"), table);
        call("DEL", "ctr1", conf); // idempotent
        w.hostNs.run(() -> new PluginCall("portmap").env("CNI_CONTAINERID", "ctr1").fails("CHECK", conf)); // nothing set up
    }

    @Test
    void hostIpMappingOnlyAnswersOnThatAddress() throws Exception {
        w.bridge("br1", "10.78.0.1/24");
        call("ADD", "ctr1", conf("[{\"hostPort\":9090,\"containerPort\":80,\"protocol\":\"tcp\",\"hostIP\":\"10.78.0.1\"}]", ""));
        assertEquals("hello-c1", w.curl(w.host, "http://10.78.0.1:9090/"));
        assertNull(w.curl(w.host, "http://10.77.0.1:9090/"));
    }

    @Test
    void delWithoutPrevResultOrMappingsRemovesByAttachment() throws Exception {
        call("ADD", "ctr1", conf(MAP_8080, ""));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"));
        String bare = "{\"cniVersion\":\"1.0.0\",\"name\":\"pmnet\",\"type\":\"portmap\",\"dataDir\":\"" + tmp.resolve("state") + "\"}";
        call("DEL", "ctr1", bare);
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
    }

    /** A DEL that failed on runtimeConfig would stop the runtime before the bridge's DEL: it must succeed and clean up. */
    @Test
    void delSucceedsWhateverTheRuntimeConfigHolds() throws Exception {
        call("ADD", "ctr1", conf("[{\"HostPort\":8080,\"ContainerPort\":80,\"Protocol\":\"tcp\",\"HostIP\":\"\"}]", ""));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"), "go-cni's spelling is mapped");
        call("DEL", "ctr1", conf("[{\"hostPort\":null,\"containerPort\":80.5,\"protocol\":\"icmp\",\"hostIP\":\"x\"}]",
                ",\"snat\":\"maybe\""));
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
        assertFalse(w.nft("list", "table", "inet", "jcni").contains("10.77.0.2"));
    }

    @Test
    void aSecondAddOfTheSameAttachmentsPortAfterALostDelKeepsItUntilTheLastDel() throws Exception {
        call("ADD", "old", conf(MAP_8080, ""));
        call("ADD", "new", conf(MAP_8080, "")); // same IP, same port: e.g. a lost DEL
        call("DEL", "old", conf(MAP_8080, ""));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"), "DEL of the earlier owner hands the port on");
        call("DEL", "new", conf(MAP_8080, ""));
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
    }

    /** c2 as a second server: its own prevResult, namespace and page. */
    String confC2(String mappings) {
        return conf(mappings, "").replace(w.nsPath(c1), w.nsPath(c2)).replace("10.77.0.2/24", "10.77.0.3/24")
                .replace("fd77::2/64", "fd77::3/64").replace("\"vc1\"", "\"vc2\"");
    }

    Map<String, Object> callC2(String cmd, String id, String conf) {
        return w.hostNs.run(() -> new PluginCall("portmap").env("CNI_CONTAINERID", id).env("CNI_NETNS", w.nsPath(c2)).ok(cmd, conf));
    }

    /** Two pods publish host port 8080: the first keeps it (as the reference); when it goes, the second gets it. */
    @Test
    void theFirstPodHoldsASharedHostPortAndItsDelHandsItToTheSecond() throws Exception {
        w.httpd(c2, 80, "hello-c2", tmp.resolve("www2"));
        call("ADD", "first", conf(MAP_8080, ""));
        callC2("ADD", "second", confC2(MAP_8080));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"), "first wins");
        assertEquals("hello-c1", w.curl(w.host, "http://[fd77::1]:8080/"), "first wins, IPv6");
        callC2("CHECK", "second", confC2(MAP_8080)); // a waiting claim is set up, as the reference's shadowed rules
        call("DEL", "first", conf(MAP_8080, ""));
        assertEquals("hello-c2", w.curl(w.host, "http://10.77.0.1:8080/"), "the next claimant takes the port");
        assertEquals("hello-c2", w.curl(w.host, "http://[fd77::1]:8080/"));
        callC2("CHECK", "second", confC2(MAP_8080));
        callC2("DEL", "second", confC2(MAP_8080));
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
        assertFalse(w.nft("list", "table", "inet", "jcni").contains("8080"));
    }

    /** DEL of the second pod, while the first runs: the first stays reachable. */
    @Test
    void delOfTheSecondPodLeavesTheFirstReachable() throws Exception {
        w.httpd(c2, 80, "hello-c2", tmp.resolve("www2"));
        call("ADD", "first", conf(MAP_8080, ""));
        callC2("ADD", "second", confC2(MAP_8080));
        callC2("DEL", "second", confC2(MAP_8080));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8080/"));
        assertEquals("hello-c1", w.curl(c2, "http://10.77.0.1:8080/"), "from a neighbour too");
        call("DEL", "first", conf(MAP_8080, ""));
        assertNull(w.curl(w.host, "http://10.77.0.1:8080/"));
    }

    /** GC of the first pod (gone without a DEL): the second, still listed, gets the port. */
    @Test
    void gcOfTheHolderHandsThePortToAValidClaimant() throws Exception {
        w.httpd(c2, 80, "hello-c2", tmp.resolve("www2"));
        call("ADD", "first", conf(MAP_8080, ""));
        callC2("ADD", "second", confC2(MAP_8080));
        String gc = "{\"cniVersion\":\"1.1.0\",\"name\":\"pmnet\",\"type\":\"portmap\",\"dataDir\":\"" + tmp.resolve("state") + "\","
                + "\"cni.dev/valid-attachments\":[{\"containerID\":\"second\",\"ifname\":\"eth0\"}]}";
        w.hostNs.run(() -> new PluginCall("portmap").ok("GC", gc));
        assertEquals("hello-c2", w.curl(w.host, "http://10.77.0.1:8080/"));
    }

    @Test
    void gcRemovesOrphansOnly() throws Exception {
        call("ADD", "keep", conf("[{\"hostPort\":8081,\"containerPort\":80}]", ""));
        call("ADD", "orphan", conf("[{\"hostPort\":8082,\"containerPort\":80}]", ""));
        String gc = "{\"cniVersion\":\"1.1.0\",\"name\":\"pmnet\",\"type\":\"portmap\",\"dataDir\":\"" + tmp.resolve("state") + "\","
                + "\"cni.dev/valid-attachments\":[{\"containerID\":\"keep\",\"ifname\":\"eth0\"}]}";
        w.hostNs.run(() -> new PluginCall("portmap").ok("GC", gc));
        assertEquals("hello-c1", w.curl(w.host, "http://10.77.0.1:8081/"));
        assertNull(w.curl(w.host, "http://10.77.0.1:8082/"));
    }

    @Test
    void scaleRulesStayConstantOnlyElementsGrow() {
        // 2,000 existing mappings in one transaction (the elements only), then one more ADD.
        PortmapConfig big = PortmapConfig.parse(Json.parseObject(conf(MAP_8080, "")));
        StringBuilder s = new StringBuilder(PortmapRules.skeleton());
        for (int i = 0; i < 2000; i++) {
            s.append("add element inet jcni pm4 { tcp . ").append(20000 + i).append(" : 10.77.").append(1 + i / 250).append('.')
                    .append(2 + i % 250).append(" . 80 }\n");
        }
        w.nft("-f", writeScript(s.toString()));
        String before = w.nft("-a", "list", "chain", "inet", "jcni", "portmap");
        call("ADD", "one", conf(MAP_8080, ""));
        String after = w.nft("-a", "list", "chain", "inet", "jcni", "portmap");
        assertEquals(ruleCount(before), ruleCount(after));
        assertEquals(4, ruleCount(after));
        String table = w.nft("list", "table", "inet", "jcni");
        assertEquals(PortmapRules.RULE_COUNT, ruleCountOfTable(table));
        assertTrue(table.contains("tcp . 8080"));
        assertTrue(big.mappings().size() == 1);
    }

    String writeScript(String s) {
        try {
            Path p = tmp.resolve("big.nft");
            java.nio.file.Files.writeString(p, s);
            return p.toString();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    static int ruleCount(String chainListing) {
        return (int) chainListing.lines().filter(l -> l.contains("# handle") && !l.contains("chain ")).count();
    }

    /** Rules of the portmap chains in a `list table` text: lines in chain blocks that are not type/policy lines. */
    static int ruleCountOfTable(String table) {
        int n = 0;
        boolean inChain = false;
        for (String l : table.lines().map(String::strip).toList()) {
            if (l.startsWith("chain ")) inChain = l.startsWith("chain portmap") || l.startsWith("chain pm_");
            else if (l.equals("}")) inChain = false;
            else if (inChain && !l.isEmpty() && !l.startsWith("type ")) n++;
        }
        return n;
    }
}
