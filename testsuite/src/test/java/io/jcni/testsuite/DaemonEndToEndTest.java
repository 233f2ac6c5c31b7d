package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.RetiredLinks;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The installed shims with jcnid running: the daemon does the work in the caller's network
 * namespace, and when it is killed in the middle of a run the shims fall back to the standalone
 * plugins without losing anything.
 */
@Tag("root")
class DaemonEndToEndTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    void daemonServesInTheCallersNamespaceAndItsDeathLosesNothing() throws Exception {
        try (World w = new World(); ExecutorService pool = Executors.newFixedThreadPool(10)) {
            try (Jcnid jcnid = Jcnid.start(jcni, w.dir.resolve("jcnid.log"))) {
                String bridge = "jtdbr" + w.id.substring(0, 4);
                String conf = """
                    {"cniVersion":"1.1.0","name":"net%s","type":"bridge","bridge":"%s","isGateway":true,
                     "ipam":{"type":"host-local","subnet":"10.127.0.0/24","dataDir":"%s"}}
                    """.formatted(w.id, bridge, w.dir.resolve("ipam"));
                int n = 10;
                List<String> netns = new ArrayList<>();
                for (int i = 0; i < n; i++) netns.add(w.container(i));
                List<Future<Sh.Run>> adds = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    Map<String, String> env = World.cniEnv("ADD", "d" + i, netns.get(i), "eth0", jcni.bin.toString());
                    adds.add(pool.submit(() -> w.inHost(env, conf, jcni.plugin("bridge").toString())));
                }
                Set<String> ips = new HashSet<>();
                for (Future<Sh.Run> f : adds) {
                    Map<String, Object> r = Json.parseObject(f.get(120, TimeUnit.SECONDS).ok().out());
                    ips.add((String) Json.asObject(Json.asList(r.get("ips")).getFirst()).get("address"));
                }
                assertEquals(n, ips.size());
                String metrics = jcnid.control("metrics").ok().out();
                assertTrue(metrics.contains("jcnid_requests_total{plugin=\"bridge\",command=\"ADD\"} " + n), metrics);
                // The work happened where the caller was: in the test's host namespace, not the daemon's.
                assertTrue(w.inHost(null, null, "ip", "link", "show", bridge).rc() == 0, "bridge in the caller's netns");
                assertNotEquals(0, Sh.run("ip", "link", "show", bridge).rc(), "no bridge in the daemon's netns");

                // Kill the daemon while DELs are on their way: the shims fall back to the standalone plugin.
                long pid = jcnid.pid();
                List<Future<Sh.Run>> dels = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    Map<String, String> env = World.cniEnv("DEL", "d" + i, netns.get(i), "eth0", jcni.bin.toString());
                    dels.add(pool.submit(() -> w.inHost(env, conf, jcni.plugin("bridge").toString())));
                    if (i == n / 2) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                }
                for (Future<Sh.Run> f : dels) f.get(180, TimeUnit.SECONDS).ok();
                Path net = w.dir.resolve("ipam").resolve("net" + w.id);
                try (Stream<Path> s = Files.list(net)) {
                    assertEquals(List.of(), s.map(p -> p.getFileName().toString())
                            .filter(x -> !x.equals("lock") && !x.startsWith("last_reserved_ip")).toList());
                }
                // Retired veths (by jcnid before its death, or by the standalone fallback) go right after.
                RetiredLinks.awaitNone(w.host);
                assertEquals("", w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip());
            }
        }
    }
}
