package io.jcni.plugins.meta.bandwidth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Netns;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Peers;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Tag("root")
class BandwidthPluginTest {
    static final String GO_BANDWIDTH = "/usr/lib/cni/bandwidth";

    /** A config with prevResult in {@code version}'s format: host veth "vh0", container "eth0". */
    static String conf(String version, String network, String ctrNs, String bandwidth) {
        boolean legacy = !version.startsWith("1.");
        String ipVersion = legacy ? "\"version\":\"4\"," : "";
        return """
                {"cniVersion":"%s","name":"%s","type":"bandwidth",%s
                 "prevResult":{"cniVersion":"%s",
                   "interfaces":[{"name":"vh0","mac":"02:00:00:00:00:01"},{"name":"eth0","sandbox":"%s"}],
                   "ips":[{%s"address":"10.77.0.2/24","gateway":"10.77.0.1","interface":1}],
                   "dns":{}}}
                """.formatted(version, network, bandwidth.isEmpty() ? "" : bandwidth + ",", version,
                World.path(ctrNs), ipVersion);
    }

    static PluginCall call(String ctrNs, String containerId) {
        return new PluginCall("bandwidth").env("CNI_NETNS", World.path(ctrNs)).env("CNI_CONTAINERID", containerId);
    }

    /** A host ns with vh0 (10.77.0.1) and a container ns with eth0 (10.77.0.2). */
    static String container(World w) {
        String c = w.newNs("c");
        w.veth("vh0", c, "eth0", "10.77.0.1/24", "10.77.0.2/24");
        return c;
    }

    static Map<String, Object> qdisc(World w, String dev, String kind) {
        return w.tcJson(w.host, "-s", "qdisc", "show", "dev", dev).stream()
                .filter(q -> kind.equals(q.get("kind"))).findFirst().orElse(null);
    }

    static boolean linkExists(World w, String ns, String name) {
        return w.ipJson(ns, "link", "show").stream().anyMatch(l -> name.equals(l.get("ifname")));
    }

    static long num(Map<String, Object> m, String key) {
        return ((Number) m.get(key)).longValue();
    }

    @Test
    void shapesTrafficBothWaysAndDelRemovesTheIfb() throws Exception {
        try (World w = World.create()) {
            String c = container(w);
            String bw = "\"ingressRate\":2000000,\"ingressBurst\":80000,\"egressRate\":2000000,\"egressBurst\":80000";
            String conf = conf("1.1.0", "bwnet", c, bw);
            PluginCall call = call(c, "ctr-shape");
            Map<String, Object> result = w.ok(call, "ADD", conf);

            String ifb = BandwidthPlugin.ifbName("bwnet", "ctr-shape");
            assertTrue(ifb.startsWith("bwp") && ifb.length() == 15, ifb);
            List<Object> ifs = Json.asList(result.get("interfaces"));
            assertEquals(3, ifs.size(), result.toString());
            Map<String, Object> ifbIf = Json.asObject(ifs.get(2));
            assertEquals(ifb, ifbIf.get("name"));
            Map<String, Object> link = w.ipJson(w.host, "-d", "link", "show", ifb).getFirst();
            assertEquals(link.get("address"), ifbIf.get("mac"));
            assertEquals("ifb", Json.asObject(link.get("linkinfo")).get("info_kind"));
            assertEquals("jcni-bandwidth/bwnet/ctr-shape/eth0", link.get("ifalias"));
            assertEquals("default", link.get("group"), "tagged, and out of its birth group in the same request");
            assertEquals(1500L, num(link, "mtu"));

            Map<String, Object> hostTbf = qdisc(w, "vh0", "tbf");
            assertNotNull(hostTbf, "tbf on vh0");
            assertEquals(250_000L, num(Json.asObject(hostTbf.get("options")), "rate"));
            assertEquals(10_000L, num(Json.asObject(hostTbf.get("options")), "burst"));
            assertNotNull(qdisc(w, "vh0", "ingress"), "ingress qdisc on vh0");
            Map<String, Object> ifbTbf = qdisc(w, ifb, "tbf");
            assertNotNull(ifbTbf, "tbf on the ifb");
            assertEquals(250_000L, num(Json.asObject(ifbTbf.get("options")), "rate"));
            String filters = World.exec(List.of("tc", "-n", w.host, "filter", "show", "dev", "vh0", "parent", "ffff:"), null, true);
            assertTrue(filters.contains("Egress Redirect to device " + ifb), filters);

            w.ok(call, "CHECK", conf);

            // 2 Mbit/s = 250 kB/s: 500 kB need about 2 s in either direction (minus the 10 kB burst).
            int bytes = 500_000;
            double idealMs = bytes / 250_000.0 * 1000;
            try (Netns cns = Netns.open(World.path(c))) {
                int port = ThreadLocalRandom.current().nextInt(20000, 40000);
                long toContainer = World.transfer(w.hostNs, cns, "10.77.0.2", port, bytes);
                assertTrue(toContainer >= idealMs * 0.5, "host→container took only " + toContainer + " ms");
                long fromContainer = World.transfer(cns, w.hostNs, "10.77.0.1", port + 1, bytes);
                assertTrue(fromContainer >= idealMs * 0.5, "container→host took only " + fromContainer + " ms");
            }
            // the container's traffic went through the ifb's tbf, the host's through vh0's
            assertTrue(num(qdisc(w, ifb, "tbf"), "bytes") >= bytes, String.valueOf(qdisc(w, ifb, "tbf")));
            assertTrue(num(qdisc(w, "vh0", "tbf"), "bytes") >= bytes, String.valueOf(qdisc(w, "vh0", "tbf")));

            w.ok(call, "DEL", conf);
            assertFalse(linkExists(w, w.host, ifb));
            w.ok(call, "DEL", conf); // idempotent: the ifb is gone
            w.ok(call.env("CNI_NETNS", null), "DEL", conf); // and without a netns
        }
    }

    @Test
    void addAndDelInEverySpecVersion() {
        try (World w = World.create()) {
            String c = container(w);
            for (String v : List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0")) {
                String conf = conf(v, "vnet", c, "\"egressRate\":1000000,\"egressBurst\":80000,\"ingressRate\":3000000,\"ingressBurst\":80000");
                PluginCall call = call(c, "ctr-" + v.replace('.', '-'));
                Map<String, Object> r = w.ok(call, "ADD", conf);
                assertEquals(v, r.get("cniVersion"));
                String ifb = BandwidthPlugin.ifbName("vnet", "ctr-" + v.replace('.', '-'));
                assertEquals(ifb, Json.asObject(Json.asList(r.get("interfaces")).get(2)).get("name"), v);
                assertEquals(1, Json.asList(r.get("ips")).size());
                if (!v.equals("0.3.0") && !v.equals("0.3.1")) w.ok(call, "CHECK", conf);
                w.ok(call, "DEL", conf);
                assertFalse(linkExists(w, w.host, ifb), v);
                // like upstream, DEL leaves vh0's qdiscs to the interface plugin's DEL; clear them for the next round
                w.ip(w.host, "link", "set", "vh0", "down");
                World.exec(List.of("tc", "-n", w.host, "qdisc", "del", "dev", "vh0", "root"), null, true);
                World.exec(List.of("tc", "-n", w.host, "qdisc", "del", "dev", "vh0", "ingress"), null, true);
                w.ip(w.host, "link", "set", "vh0", "up");
            }
            Map<String, Object> err = w.fails(call(c, "old"), "ADD", conf("0.2.0", "vnet", c, "\"egressRate\":1000000,\"egressBurst\":80000"));
            assertEquals(1L, num(err, "code"), err.toString());
        }
    }

    @Test
    void zeroOrAbsentBandwidthPassesPrevResultThrough() {
        try (World w = World.create()) {
            String c = container(w);
            for (String bw : List.of("", "\"ingressRate\":0,\"ingressBurst\":0", "\"runtimeConfig\":{\"bandwidth\":{}}")) {
                Map<String, Object> r = w.ok(call(c, "ctr-zero"), "ADD", conf("1.0.0", "znet", c, bw));
                assertEquals(2, Json.asList(r.get("interfaces")).size(), bw);
                assertEquals(null, qdisc(w, "vh0", "tbf"));
                assertEquals(null, qdisc(w, "vh0", "ingress"));
            }
        }
    }

    @Test
    void runtimeConfigBandwidthIsUsedWhenTheConfigHasNone() {
        try (World w = World.create()) {
            String c = container(w);
            String conf = conf("1.0.0", "rnet", c, "\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000000,\"ingressBurst\":160000}}");
            Map<String, Object> r = w.ok(call(c, "ctr-rc"), "ADD", conf);
            assertEquals(2, Json.asList(r.get("interfaces")).size(), "ingress only: no ifb");
            assertEquals(1_000_000L, num(Json.asObject(qdisc(w, "vh0", "tbf").get("options")), "rate"));
            assertEquals(null, qdisc(w, "vh0", "ingress"));
            w.ok(call(c, "ctr-rc"), "CHECK", conf);
            // top-level keys win over runtimeConfig
            String both = conf("1.0.0", "rnet", c, "\"ingressRate\":16000000,\"ingressBurst\":160000,"
                    + "\"runtimeConfig\":{\"bandwidth\":{\"ingressRate\":8000000,\"ingressBurst\":160000}}");
            Map<String, Object> err = w.fails(call(c, "ctr-rc"), "CHECK", both);
            assertTrue(String.valueOf(err.get("msg")).contains("Rate"), err.toString());
        }
    }

    @Test
    void checkNoticesAChangedQdiscAndAMissingIfb() {
        try (World w = World.create()) {
            String c = container(w);
            String conf = conf("1.0.0", "cnet", c, "\"ingressRate\":1000000,\"ingressBurst\":80000,\"egressRate\":1000000,\"egressBurst\":80000");
            PluginCall call = call(c, "ctr-check");
            w.ok(call, "ADD", conf);
            w.ok(call, "CHECK", conf);
            World.exec(List.of("tc", "-n", w.host, "qdisc", "change", "dev", "vh0", "root", "handle", "1:", "tbf",
                    "rate", "3mbit", "burst", "10000", "latency", "25ms"), null, true);
            Map<String, Object> err = w.fails(call, "CHECK", conf);
            assertTrue(String.valueOf(err.get("msg")).contains("Rate doesn't match"), err.toString());
            World.exec(List.of("tc", "-n", w.host, "qdisc", "change", "dev", "vh0", "root", "handle", "1:", "tbf",
                    "rate", "1mbit", "burst", "10000", "latency", "25ms"), null, true);
            w.ok(call, "CHECK", conf);
            w.ip(w.host, "link", "del", BandwidthPlugin.ifbName("cnet", "ctr-check"));
            err = w.fails(call, "CHECK", conf);
            assertTrue(String.valueOf(err.get("msg")).contains("ifb"), err.toString());
        }
    }

    /** With a background (jcnid), DEL retires the ifb and a held deletion does not stop the next ADD; GC takes retired ifbs. */
    @Test
    void delInTheDaemonRetiresTheIfbAndTheNameIsFreeAtOnce() {
        try (World w = World.create()) {
            String c = container(w);
            java.util.concurrent.ConcurrentLinkedQueue<Runnable> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
            java.util.Set<String> keys = java.util.concurrent.ConcurrentHashMap.newKeySet();
            String conf = conf("1.1.0", "rnet", c, "\"egressRate\":1000000,\"egressBurst\":80000");
            PluginCall call = call(c, "ctr-r").background((key, delay, task) -> {
                if (keys.add(key)) held.add(task.get());
                return true;
            });
            String ifb = BandwidthPlugin.ifbName("rnet", "ctr-r");
            w.ok(call, "ADD", conf);
            w.ok(call, "DEL", conf);
            assertFalse(linkExists(w, w.host, ifb), "the name is free");
            assertEquals(1, held.size());
            List<Map<String, Object>> retired = w.ipJson(w.host, "link", "show", "type", "ifb").stream()
                    .filter(l -> String.valueOf(l.get("ifname")).startsWith("jcnidel")).toList();
            assertEquals(1, retired.size(), retired.toString());
            assertFalse(String.valueOf(retired.getFirst().get("flags")).contains("UP"), "the retired ifb is down");
            // the same attachment again, while the old ifb waits for its deletion
            w.ip(w.host, "link", "set", "vh0", "down");
            World.exec(List.of("tc", "-n", w.host, "qdisc", "del", "dev", "vh0", "ingress"), null, true);
            w.ip(w.host, "link", "set", "vh0", "up");
            w.ok(call, "ADD", conf);
            assertTrue(linkExists(w, w.host, ifb));
            // a daemon that died before deleting: GC removes the retired ifb, keeps the live one
            String gc = """
                    {"cniVersion":"1.1.0","name":"rnet","type":"bandwidth",
                     "cni.dev/valid-attachments":[{"containerID":"ctr-r","ifname":"eth0"}]}
                    """;
            w.ok(new PluginCall("bandwidth").env("CNI_CONTAINERID", null).env("CNI_IFNAME", null).env("CNI_NETNS", null), "GC", gc);
            assertTrue(linkExists(w, w.host, ifb), "the live ifb is kept");
            assertEquals(0, w.ipJson(w.host, "link", "show", "type", "ifb").stream()
                    .filter(l -> String.valueOf(l.get("ifname")).startsWith("jcnidel")).count(), "GC took the retired one");
            held.poll().run(); // its deletion finds nothing left: no error
            w.ok(call(c, "ctr-r"), "DEL", conf);
            assertFalse(linkExists(w, w.host, ifb));
        }
    }

    @Test
    void gcRemovesOnlyOrphanIfbsOfThisNetwork() {
        try (World w = World.create()) {
            String c1 = w.newNs("a");
            String c2 = w.newNs("b");
            String c3 = w.newNs("o");
            w.veth("vh0", c1, "eth0", null, "10.77.0.2/24");
            String bw = "\"egressRate\":1000000,\"egressBurst\":80000";
            w.ok(call(c1, "ctr-keep"), "ADD", conf("1.1.0", "gcnet", c1, bw));
            // two more attachments with their own host veths
            w.ip(w.host, "link", "add", "vh1", "type", "veth", "peer", "name", "eth0", "netns", c2);
            w.ip(w.host, "link", "add", "vh2", "type", "veth", "peer", "name", "eth0", "netns", c3);
            w.ok(call(c2, "ctr-gone"), "ADD", conf("1.1.0", "gcnet", c2, bw).replace("\"vh0\"", "\"vh1\""));
            w.ok(call(c3, "ctr-other"), "ADD", conf("1.1.0", "othernet", c3, bw).replace("\"vh0\"", "\"vh2\""));
            // an ifb jcni did not make (no alias), named like one
            w.ip(w.host, "link", "add", "bwp000000000000", "type", "ifb");

            String keep = BandwidthPlugin.ifbName("gcnet", "ctr-keep");
            String gone = BandwidthPlugin.ifbName("gcnet", "ctr-gone");
            String other = BandwidthPlugin.ifbName("othernet", "ctr-other");
            assertTrue(linkExists(w, w.host, gone));
            String gc = """
                    {"cniVersion":"1.1.0","name":"gcnet","type":"bandwidth","egressRate":1000000,"egressBurst":80000,
                     "cni.dev/valid-attachments":[{"containerID":"ctr-keep","ifname":"eth0"},{"containerID":"ctr-x","ifname":"eth1"}]}
                    """;
            w.ok(new PluginCall("bandwidth").env("CNI_CONTAINERID", null).env("CNI_IFNAME", null).env("CNI_NETNS", null), "GC", gc);
            assertTrue(linkExists(w, w.host, keep), "valid attachment kept");
            assertFalse(linkExists(w, w.host, gone), "orphan removed");
            assertTrue(linkExists(w, w.host, other), "other network's ifb kept");
            assertTrue(linkExists(w, w.host, "bwp000000000000"), "foreign ifb kept");
        }
    }

    @Test
    void failsClearlyWhenTheContainerInterfaceIsNotAVethOfPrevResult() {
        try (World w = World.create()) {
            String c = container(w);
            String conf = conf("1.0.0", "enet", c, "\"egressRate\":1000000,\"egressBurst\":80000");
            Map<String, Object> err = w.fails(call(c, "ctr-e"), "ADD", conf.replace("\"vh0\"", "\"vhX\""));
            assertTrue(String.valueOf(err.get("msg")).contains("no veth peer"), err.toString());
            err = w.fails(call(c, "ctr-e").env("CNI_IFNAME", "lo"), "ADD", conf);
            assertTrue(String.valueOf(err.get("details")).contains("not a veth"), err.toString());
            err = w.fails(call(c, "ctr-e"), "ADD", conf.replaceFirst("(?s),\\s*\"prevResult\".*", "}"));
            assertTrue(String.valueOf(err.get("msg")).contains("chained"), err.toString());
            assertFalse(linkExists(w, w.host, BandwidthPlugin.ifbName("enet", "ctr-e")), "nothing left behind");
        }
    }

    @Test
    @Tag("interop")
    void matchesTheReferencePluginAndInteroperatesWithIt() {
        Peers.requireExecutable(Path.of(GO_BANDWIDTH), "containernetworking-plugins");
        try (World go = World.create(); World j = World.create()) {
            String cg = container(go);
            String cj = container(j);
            String bw = "\"ingressRate\":1000000,\"ingressBurst\":80000,\"egressRate\":3000000,\"egressBurst\":240000";
            String confGo = conf("1.0.0", "refnet", cg, bw);
            String confJ = conf("1.0.0", "refnet", cj, bw);
            Map<String, String> env = new HashMap<>(Map.of("CNI_CONTAINERID", "ctr-ref", "CNI_NETNS", World.path(cg),
                    "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni"));
            env.put("CNI_COMMAND", "ADD");
            Map<String, Object> goResult = Json.parseObject(go.goPlugin(GO_BANDWIDTH, env, confGo));
            Map<String, Object> jResult = j.ok(call(cj, "ctr-ref"), "ADD", confJ);

            assertEquals(normalize(goResult, cg), normalize(jResult, cj));
            String ifb = BandwidthPlugin.ifbName("refnet", "ctr-ref");
            assertEquals(ifb, Json.asObject(Json.asList(goResult.get("interfaces")).get(2)).get("name"), "same ifb name");
            for (String dev : List.of("vh0", ifb)) {
                assertEquals(qdiscShape(go, dev), qdiscShape(j, dev), dev);
            }

            // each CHECKs the other's work, and each DELs the other's ifb
            env.put("CNI_COMMAND", "CHECK");
            env.put("CNI_NETNS", World.path(cj));
            j.goPlugin(GO_BANDWIDTH, env, confJ);
            go.ok(call(cg, "ctr-ref"), "CHECK", confGo);
            env.put("CNI_COMMAND", "DEL");
            j.goPlugin(GO_BANDWIDTH, env, confJ);
            assertFalse(linkExists(j, j.host, ifb));
            go.ok(call(cg, "ctr-ref"), "DEL", confGo);
            assertFalse(linkExists(go, go.host, ifb));
        }
    }

    /**
     * What containerd's CRI sends through go-cni: untagged Go field names and a burst of
     * 4294967295 bits. The Go plugin accepts it and wraps the tbf buffer; jcni must give the same
     * qdiscs ({@code tbf rate 10Mbit burst 193273526b lat 275s}).
     */
    @ParameterizedTest
    @ValueSource(longs = {100_000, 10_000_000, 1_000_000_000})
    @Tag("interop")
    void containerdsBandwidthGivesTheSameQdiscsAsTheReferencePlugin(long rate) {
        Peers.requireExecutable(Path.of(GO_BANDWIDTH), "containernetworking-plugins");
        try (World go = World.create(); World j = World.create()) {
            String cg = container(go);
            String cj = container(j);
            String bw = "\"capabilities\":{\"bandwidth\":true},\"runtimeConfig\":{\"bandwidth\":{\"IngressRate\":" + rate + ","
                    + "\"IngressBurst\":4294967295,\"EgressRate\":" + rate + ",\"EgressBurst\":4294967295}}";
            String confGo = conf("1.0.0", "ctrdnet", cg, bw);
            String confJ = conf("1.0.0", "ctrdnet", cj, bw);
            Map<String, String> env = new HashMap<>(Map.of("CNI_CONTAINERID", "ctr-ctrd", "CNI_NETNS", World.path(cg),
                    "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni", "CNI_COMMAND", "ADD"));
            go.goPlugin(GO_BANDWIDTH, env, confGo);
            j.ok(call(cj, "ctr-ctrd"), "ADD", confJ);
            String ifb = BandwidthPlugin.ifbName("ctrdnet", "ctr-ctrd");
            for (String dev : List.of("vh0", ifb)) {
                assertEquals(qdiscShape(go, dev), qdiscShape(j, dev), dev);
                String shown = World.exec(List.of("tc", "-n", j.host, "qdisc", "show", "dev", dev, "root"), null, true);
                assertTrue(shown.contains("tbf"), shown);
                if (rate == 10_000_000) assertTrue(shown.contains("rate 10Mbit burst 193273526b lat 275s"), shown);
                assertEquals(World.exec(List.of("tc", "-n", go.host, "qdisc", "show", "dev", dev, "root"), null, true), shown);
            }
            j.ok(call(cj, "ctr-ctrd"), "CHECK", confJ);
            j.ok(call(cj, "ctr-ctrd"), "DEL", confJ);
            assertFalse(linkExists(j, j.host, ifb));
            env.put("CNI_COMMAND", "DEL");
            go.goPlugin(GO_BANDWIDTH, env, confGo);
        }
    }

    /** DEL reads no bandwidth value: a config ADD would refuse still deletes the ifb. */
    @Test
    void delSucceedsWhateverTheBandwidthValues() {
        try (World w = World.create()) {
            String c = container(w);
            PluginCall call = call(c, "ctr-baddel");
            w.ok(call, "ADD", conf("1.0.0", "dnet", c, "\"egressRate\":1000000,\"egressBurst\":80000"));
            String ifb = BandwidthPlugin.ifbName("dnet", "ctr-baddel");
            assertTrue(linkExists(w, w.host, ifb));
            for (String bad : List.of("\"egressBurst\":8", "\"egressRate\":\"fast\",\"egressBurst\":-1",
                    "\"runtimeConfig\":{\"bandwidth\":{\"egressRate\":1.5}}")) {
                w.ok(call, "DEL", conf("1.0.0", "dnet", c, bad));
                assertFalse(linkExists(w, w.host, ifb), bad);
            }
        }
    }

    /** The result without what legitimately differs: the ifb's random MAC and the netns path. */
    private static Map<String, Object> normalize(Map<String, Object> r, String ctrNs) {
        String s = Json.write(r).replace(World.path(ctrNs), "NETNS");
        Map<String, Object> m = Json.parseObject(s);
        List<Object> ifs = new ArrayList<>();
        for (Object o : Json.asList(m.get("interfaces"))) {
            Map<String, Object> i = new HashMap<>(Json.asObject(o));
            if (String.valueOf(i.get("name")).startsWith("bwp")) i.put("mac", "MAC");
            ifs.add(i);
        }
        m = new HashMap<>(m);
        m.put("interfaces", ifs);
        return m;
    }

    /** kind, handle, parent and options of each qdisc of {@code dev}. */
    private static List<String> qdiscShape(World w, String dev) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> q : w.tcJson(w.host, "qdisc", "show", "dev", dev)) {
            out.add(q.get("kind") + " " + q.get("handle") + " " + q.get("parent") + " " + q.get("root") + " " + q.get("options"));
        }
        out.sort(null);
        return out;
    }
}
