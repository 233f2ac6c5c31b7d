package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * jcnid under concurrent nftables work. jcnid runs inside the test's host
 * namespace, as on a node (the caller's namespace is then its own and plugins run directly on
 * jcnid's threads). N concurrent requests through the installed shims, a third each bridge with
 * {@code ipMasq}, portmap and firewall (all three write the one nft state under its flock), then
 * N concurrent DELs; a poller asks {@code jcnid status} the whole time. Every request must be
 * served by jcnid (none declined to the standalone fallback) and succeed, status must keep
 * answering, and nothing may be left: no veth, no nft element, no reservation, no state file.
 * Bounds are timeouts on each call, never speed assertions.
 */
@Tag("root")
class DaemonUnderLoadTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    /** The owner an element's comment names: scope, network, container ID, interface. */
    private static final Pattern COMMENT = Pattern.compile("comment \"(portmap|firewall|masq) \\S+ (\\S+) ");

    @ParameterizedTest(name = "{0} concurrent requests")
    @ValueSource(ints = {50, 200})
    void concurrentNftWorkNeitherDeadlocksNorStopsStatus(int n) throws Exception {
        try (World w = new World(); ExecutorService pool = Executors.newFixedThreadPool(n); Daemon d = Daemon.startIn(w, jcni)) {
            String bridge = "jtlbr" + w.id.substring(0, 4);
            String net = "load" + w.id;
            Path nftDir = w.dir.resolve("nft");
            String pmFwNs = w.namespace("jts-l-" + w.id);
            List<String> bridgeNs = new ArrayList<>();
            for (int i = 0; i < n; i += 3) bridgeNs.add(w.namespace("jts-l" + i + "-" + w.id));

            AtomicBoolean loadDone = new AtomicBoolean();
            AtomicInteger statusAnswers = new AtomicInteger();
            Future<?> poller = Executors.newVirtualThreadPerTaskExecutor().submit(() -> {
                while (!loadDone.get()) {
                    Sh.Run s = d.statusRun();
                    assertEquals(0, s.rc(), "jcnid status during the load: " + s);
                    assertTrue(s.out().contains("status ok"), s.out());
                    statusAnswers.incrementAndGet();
                }
                return null;
            });

            List<Future<Sh.Run>> adds = new ArrayList<>();
            for (int i = 0; i < n; i++) adds.add(pool.submit(call(d, "ADD", i, net, bridge, nftDir, pmFwNs, bridgeNs)));
            Set<String> ips = new HashSet<>();
            for (int i = 0; i < n; i++) {
                Sh.Run r = adds.get(i).get(600, TimeUnit.SECONDS).ok();
                if (i % 3 == 0) ips.add((String) Json.asObject(Json.asList(Json.parseObject(r.out()).get("ips")).getFirst()).get("address"));
            }
            int bridges = bridgeNs.size(), portmaps = (n + 1) / 3, firewalls = n / 3;
            assertEquals(bridges, ips.size(), "distinct addresses: " + ips);
            String table = w.inHost(null, null, "nft", "list", "table", "inet", "jcni").ok().out();
            assertEquals(Map.of("portmap", portmaps, "firewall", firewalls, "masq", bridges), owners(table));
            int answeredDuringAdds = statusAnswers.get();

            List<Future<Sh.Run>> dels = new ArrayList<>();
            for (int i = 0; i < n; i++) dels.add(pool.submit(call(d, "DEL", i, net, bridge, nftDir, pmFwNs, bridgeNs)));
            for (Future<Sh.Run> f : dels) f.get(600, TimeUnit.SECONDS).ok();
            loadDone.set(true);
            poller.get(300, TimeUnit.SECONDS);
            assertTrue(answeredDuringAdds > 0 && statusAnswers.get() > answeredDuringAdds,
                    "status answered " + answeredDuringAdds + " times during the ADDs, " + statusAnswers.get() + " in all");

            // Served by jcnid, every one: a decline would have run the standalone plugin instead.
            String metrics = d.metrics();
            assertTrue(metrics.contains("\njcnid_declined_total 0\n"), metrics);
            assertEquals(2 * n, requestsTotal(metrics), metrics);
            assertFalse(Pattern.compile("jcnid_timeouts_total\\{[^}]*} [1-9]").matcher(metrics).find(), metrics);

            System.out.printf("DaemonUnderLoadTest: %d concurrent: %d requests served by jcnid, status answered %d times (%d during the ADDs)%n",
                    n, requestsTotal(metrics), statusAnswers.get(), answeredDuringAdds);

            // Nothing left.
            table = w.inHost(null, null, "nft", "list", "table", "inet", "jcni").ok().out();
            assertEquals(Map.of("portmap", 0, "firewall", 0, "masq", 0), owners(table), table);
            // When DEL answers, a veth may still be there only retired (in the group jcnid deletes
            // together, right after); once that deferred work is done, none is left.
            String veths = w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip();
            String retired = w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth", "group", "1784901225").ok().out().strip();
            assertEquals(veths, retired, "every veth left right after DEL is retired");
            d.awaitDeferredIdle();
            assertEquals("", w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip());
            try (Stream<Path> s = Files.list(w.dir.resolve("ipam").resolve(net))) {
                assertEquals(List.of(), s.map(p -> p.getFileName().toString())
                        .filter(x -> !x.equals("lock") && !x.startsWith("last_reserved_ip")).toList());
            }
            try (Stream<Path> s = Files.walk(nftDir)) {
                assertEquals(List.of(), s.filter(p -> p.toString().contains("/att/") || p.toString().contains("/key/"))
                        .filter(Files::isRegularFile).map(Path::toString).toList());
            }
        }
    }

    /** Request i: bridge+ipMasq (i % 3 == 0), portmap (1) or firewall (2), through the shim to jcnid. */
    private static java.util.concurrent.Callable<Sh.Run> call(Daemon d, String cmd, int i, String net, String bridge,
                                                              Path nftDir, String pmFwNs, List<String> bridgeNs) {
        World w = d.w;
        String cid = "l" + i;
        String conf;
        String type;
        String netns;
        String ip = "10.%d.%d.%d".formatted(64 + i / 250 / 250, i / 250 % 250, 2 + i % 250);
        String prev = """
            "prevResult":{"cniVersion":"1.1.0","interfaces":[{"name":"%s"},{"name":"eth0","sandbox":"%s"}],
              "ips":[{"address":"%s/16","interface":1}]}""".formatted(bridge, pmFwNs, ip);
        switch (i % 3) {
            case 0 -> {
                type = "bridge";
                netns = bridgeNs.get(i / 3);
                conf = """
                    {"cniVersion":"1.1.0","name":"%s","type":"bridge","bridge":"%s","isGateway":true,"ipMasq":true,
                     "dataDir":"%s","ipam":{"type":"host-local","subnet":"10.125.0.0/16","dataDir":"%s"}}
                    """.formatted(net, bridge, nftDir, w.dir.resolve("ipam"));
            }
            case 1 -> {
                type = "portmap";
                netns = pmFwNs;
                conf = """
                    {"cniVersion":"1.1.0","name":"%s","type":"portmap","dataDir":"%s",
                     "runtimeConfig":{"portMappings":[{"hostPort":%d,"containerPort":80,"protocol":"tcp"},
                                                      {"hostPort":%d,"containerPort":53,"protocol":"udp"}]},%s}
                    """.formatted(net, nftDir, 20000 + i, 20000 + i, prev);
            }
            default -> {
                type = "firewall";
                netns = pmFwNs;
                conf = """
                    {"cniVersion":"1.1.0","name":"%s","type":"firewall","dataDir":"%s",%s}
                    """.formatted(net, nftDir, prev);
            }
        }
        Map<String, String> env = d.env(World.cniEnv(cmd, cid, netns, "eth0", jcni.bin.toString()));
        String stdin = conf;
        return () -> w.inHost(env, stdin, jcni.plugin(type).toString());
    }

    /** Per scope, how many attachments own elements in the table. */
    private static Map<String, Integer> owners(String table) {
        Map<String, Set<String>> by = new java.util.TreeMap<>();
        for (String scope : List.of("portmap", "firewall", "masq")) by.put(scope, new HashSet<>());
        Matcher x = COMMENT.matcher(table);
        while (x.find()) by.get(x.group(1)).add(x.group(2));
        Map<String, Integer> m = new java.util.TreeMap<>();
        by.forEach((k, v) -> m.put(k, v.size()));
        return m;
    }

    private static int requestsTotal(String metrics) {
        int sum = 0;
        Matcher m = Pattern.compile("(?m)^jcnid_requests_total\\{[^}]*} (\\d+)$").matcher(metrics);
        while (m.find()) sum += Integer.parseInt(m.group(1));
        return sum;
    }
}
