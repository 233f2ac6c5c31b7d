package io.jcni.plugins.meta.sbr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.meta.bandwidth.World;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Peers;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class SbrPluginTest {
    static final String GO_SBR = "/usr/lib/cni/sbr";

    /**
     * A container with eth0 (10.78.1.2/24, default route via .1) and net1 (10.78.2.2/24 plus a
     * route to 10.99.0.0/16 via 10.78.2.1), each a veth to the host ns.
     */
    static String container(World w, String tag) {
        String c = w.newNs("c");
        w.veth("vh0" + tag, c, "eth0", null, "10.78.1.2/24");
        w.veth("vh1" + tag, c, "net1", null, "10.78.2.2/24");
        w.ip(c, "route", "add", "default", "via", "10.78.1.1", "dev", "eth0");
        w.ip(c, "route", "add", "10.99.0.0/16", "via", "10.78.2.1", "dev", "net1");
        return c;
    }

    static String conf(String version, String ctrNs, String extra, String... ips) {
        boolean legacy = !version.startsWith("1.");
        List<String> ipJson = new ArrayList<>();
        for (String ip : ips) {
            String gw = ip.replaceFirst("\\.\\d+/\\d+$", ".1");
            ipJson.add("{" + (legacy ? "\"version\":\"4\"," : "") + "\"address\":\"" + ip + "\",\"gateway\":\"" + gw + "\",\"interface\":1}");
        }
        return """
                {"cniVersion":"%s","name":"sbrnet","type":"sbr"%s,
                 "prevResult":{"cniVersion":"%s",
                   "interfaces":[{"name":"vh1x"},{"name":"net1","sandbox":"%s"}],
                   "ips":[%s]}}
                """.formatted(version, extra.isEmpty() ? "" : "," + extra, version, World.path(ctrNs), String.join(",", ipJson));
    }

    static PluginCall call(String ctrNs) {
        return new PluginCall("sbr").env("CNI_NETNS", World.path(ctrNs)).env("CNI_IFNAME", "net1");
    }

    /** "dst via gw dev" lines of a table, sorted; kernel/link details left out. */
    static List<String> routes(World w, String ns, String table) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> r : w.ipJson(ns, "-4", "route", "show", "table", table)) {
            out.add(r.get("dst") + (r.get("gateway") != null ? " via " + r.get("gateway") : "") + " dev " + r.get("dev")
                    + (r.get("prefsrc") != null ? " src " + r.get("prefsrc") : ""));
        }
        out.sort(null);
        return out;
    }

    /** "from SRC lookup TABLE" of every rule with a source. */
    static List<String> rules(World w, String ns) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> r : w.ipJson(ns, "rule", "show")) {
            if (r.get("src") == null || "all".equals(r.get("src"))) continue;
            out.add("from " + r.get("src") + " lookup " + r.get("table"));
        }
        return out;
    }

    @Test
    void addMovesTheInterfaceRoutesToItsOwnTableAndDelRemovesThem() {
        try (World w = World.create()) {
            String c = container(w, "");
            String conf = conf("1.1.0", c, "", "10.78.2.2/24");
            Map<String, Object> r = w.ok(call(c), "ADD", conf);
            Map<String, Object> prev = Json.asObject(Json.parseObject(conf).get("prevResult"));
            assertEquals(prev.get("interfaces"), r.get("interfaces"), "prevResult passes through");
            assertEquals(prev.get("ips"), r.get("ips"), "prevResult passes through");

            assertEquals(List.of("from 10.78.2.2 lookup 100"), rules(w, c));
            assertEquals(List.of("10.78.2.0/24 dev net1 src 10.78.2.2", "10.99.0.0/16 via 10.78.2.1 dev net1",
                    "default via 10.78.2.1 dev net1"), routes(w, c, "100"));
            assertEquals(List.of("10.78.1.0/24 dev eth0 src 10.78.1.2", "default via 10.78.1.1 dev eth0"), routes(w, c, "main"),
                    "net1's routes left the main table, eth0's stayed");
            w.ok(call(c), "CHECK", conf);

            w.ok(call(c), "DEL", conf);
            assertEquals(List.of(), rules(w, c));
            assertEquals(List.of(), routes(w, c, "100"));
            w.ok(call(c), "DEL", conf); // idempotent
            w.ok(call(c).env("CNI_IFNAME", "gone0"), "DEL", conf);
            w.ok(call(c).env("CNI_NETNS", "/var/run/netns/jw-does-not-exist"), "DEL", conf);
            w.ok(call(c).env("CNI_NETNS", null), "DEL", conf);
        }
    }

    /** Found by the chaos fuzzer: a CNI_NETNS that is a directory is a CNI error, not an escaped ErrnoException with a trace. */
    @Test
    void netnsThatIsADirectoryIsRefusedWithoutAStackTrace() throws Exception {
        Path dir = Files.createTempDirectory("sbr-not-a-netns-");
        try {
            for (String command : List.of("ADD", "DEL")) {
                PluginCall call = new PluginCall("sbr").env("CNI_NETNS", dir.toString()).env("CNI_IFNAME", "net1");
                var out = call.run(command, conf("1.1.0", "jw-none", "", "10.78.2.2/24"));
                assertEquals(1, out.exitCode(), command + ": " + out.stdout());
                assertTrue(out.stdout().contains("failed to open netns"), out.stdout());
                assertFalse(call.stderr.toString().contains("\tat "), call.stderr.toString());
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void everySpecVersion() {
        try (World w = World.create()) {
            for (String v : List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")) {
                String c = container(w, v.replace(".", ""));
                String conf = conf(v, c, "", "10.78.2.2/24");
                Map<String, Object> r = w.ok(call(c), "ADD", conf);
                assertEquals(v, r.get("cniVersion"));
                assertEquals(List.of("from 10.78.2.2 lookup 100"), rules(w, c), v);
                assertTrue(routes(w, c, "100").contains("default via 10.78.2.1 dev net1"), v);
                w.ok(call(c), "DEL", conf);
                assertEquals(List.of(), rules(w, c), v);
                assertEquals(List.of(), routes(w, c, "100"), v);
            }
        }
    }

    @Test
    void skipsTablesInUseAndGivesEachAddressItsOwnTable() {
        try (World w = World.create()) {
            String c = container(w, "");
            w.ip(c, "addr", "add", "10.78.3.2/24", "dev", "net1");
            w.ip(c, "rule", "add", "from", "192.0.2.1", "lookup", "100");
            w.ip(c, "route", "add", "198.51.100.0/24", "dev", "eth0", "table", "101");
            String conf = conf("1.0.0", c, "", "10.78.2.2/24", "10.78.3.2/24");
            w.ok(call(c), "ADD", conf);

            List<String> rules = rules(w, c);
            assertTrue(rules.contains("from 10.78.2.2 lookup 102"), rules.toString());
            assertTrue(rules.contains("from 10.78.3.2 lookup 103"), rules.toString());
            assertEquals(List.of("10.78.2.0/24 dev net1 src 10.78.2.2", "10.99.0.0/16 via 10.78.2.1 dev net1",
                    "default via 10.78.2.1 dev net1"), routes(w, c, "102"));
            assertEquals(List.of("10.78.3.0/24 dev net1 src 10.78.3.2", "default via 10.78.3.1 dev net1"), routes(w, c, "103"));

            w.ok(call(c), "DEL", conf);
            assertEquals(List.of("from 192.0.2.1 lookup 100"), rules(w, c), "the foreign rule stays");
            assertEquals(List.of("198.51.100.0/24 dev eth0"), routes(w, c, "101"), "the foreign table stays");
            assertEquals(List.of(), routes(w, c, "102"));
            assertEquals(List.of(), routes(w, c, "103"));
        }
    }

    @Test
    void staticGatewaysAndSourceHints() {
        try (World w = World.create()) {
            String c = container(w, "");
            String conf = conf("1.0.0", c, "\"gateways\":[\"10.78.2.254\"],\"addSourceHints\":true", "10.78.2.2/24");
            w.ok(call(c), "ADD", conf);
            assertTrue(routes(w, c, "100").contains("default via 10.78.2.254 dev net1"), routes(w, c, "100").toString());
            assertTrue(routes(w, c, "main").contains("10.78.2.0/24 dev net1 src 10.78.2.2"), "subnet route stays in main");
            assertFalse(routes(w, c, "main").contains("10.99.0.0/16 via 10.78.2.1 dev net1"), "gateway routes leave main");

            Map<String, Object> err = w.fails(call(c), "ADD", conf("1.0.0", c, "\"gateways\":[\"10.0.0.1\",\"10.0.0.2\"]", "10.78.2.2/24"));
            assertTrue(String.valueOf(err.get("msg")).contains("gateways"), err.toString());
        }
    }

    @Test
    void configuredTableOnlyGetsRules() {
        try (World w = World.create()) {
            String c = container(w, "");
            String conf = conf("1.0.0", c, "\"table\":500", "10.78.2.2/24");
            w.ok(call(c), "ADD", conf);
            assertEquals(List.of("from 10.78.2.2 lookup 500"), rules(w, c));
            assertTrue(routes(w, c, "main").contains("10.99.0.0/16 via 10.78.2.1 dev net1"), "routes untouched");
            w.ip(c, "rule", "add", "from", "10.78.2.2", "lookup", "600");
            w.ok(call(c), "DEL", conf);
            assertEquals(List.of("from 10.78.2.2 lookup 600"), rules(w, c), "only the rule to table 500 goes");

            Map<String, Object> err = w.fails(call(c), "ADD", conf("1.0.0", c, "\"table\":\"x\"", "10.78.2.2/24"));
            assertTrue(String.valueOf(err.get("msg")).contains("table"), err.toString());
            err = w.fails(call(c), "ADD", conf("1.0.0", c, "", "10.78.2.2/24").replaceFirst("(?s),\\s*\"prevResult\".*", "}"));
            assertTrue(String.valueOf(err.get("msg")).contains("chained"), err.toString());
        }
    }

    @Test
    @Tag("interop")
    void matchesTheReferencePluginAndInteroperatesWithIt() {
        Peers.requireExecutable(Path.of(GO_SBR), "containernetworking-plugins");
        try (World go = World.create(); World j = World.create()) {
            String cg = container(go, "");
            String cj = container(j, "");
            String confGo = conf("1.0.0", cg, "", "10.78.2.2/24");
            String confJ = conf("1.0.0", cj, "", "10.78.2.2/24");
            Map<String, String> env = new HashMap<>(Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "ctr1",
                    "CNI_NETNS", World.path(cg), "CNI_IFNAME", "net1", "CNI_PATH", "/usr/lib/cni"));
            Map<String, Object> goResult = Json.parseObject(go.goPlugin(GO_SBR, env, confGo));
            Map<String, Object> jResult = j.ok(call(cj), "ADD", confJ);
            assertEquals(Json.write(goResult).replace(World.path(cg), "NS"), Json.write(jResult).replace(World.path(cj), "NS"));

            assertEquals(fullState(go, cg), fullState(j, cj));

            // each DELs the other's
            env.put("CNI_COMMAND", "DEL");
            env.put("CNI_NETNS", World.path(cj));
            j.goPlugin(GO_SBR, env, confJ);
            assertEquals(List.of(), rules(j, cj));
            go.ok(call(cg), "DEL", confGo);
            assertEquals(List.of(), rules(go, cg));
        }
    }

    /** Every rule and every IPv4 and IPv6 route outside the local table, as ip prints them. */
    private static List<String> fullState(World w, String ns) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> r : w.ipJson(ns, "rule", "show")) out.add("rule " + r);
        for (String fam : List.of("-4", "-6")) {
            for (Map<String, Object> r : w.ipJson(ns, fam, "route", "show", "table", "all")) {
                if ("local".equals(r.get("table"))) continue;
                out.add("route " + r);
            }
        }
        out.sort(null);
        return out;
    }
}
