package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.RetiredLinks;
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
 * The installed jcni plugins as separate processes, the way runtimes run them: many at once on one
 * network, and killed with SIGKILL in the middle of an ADD.
 */
@Tag("root")
class ConcurrencyAndCrashTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    private static String bridgeConf(World w, String bridge) {
        return """
            {"cniVersion":"1.1.0","name":"net%s","type":"bridge","bridge":"%s","isGateway":true,
             "ipam":{"type":"host-local","subnet":"10.126.0.0/16","dataDir":"%s"}}
            """.formatted(w.id, bridge, w.dir.resolve("ipam"));
    }

    private static List<String> allocations(World w) throws Exception {
        Path net = w.dir.resolve("ipam").resolve("net" + w.id);
        if (!Files.isDirectory(net)) return List.of();
        try (Stream<Path> s = Files.list(net)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals("lock") && !n.startsWith("last_reserved_ip")).sorted().toList();
        }
    }

    @Test
    void fiftyParallelAddsGetFiftyDistinctAddresses() throws Exception {
        try (World w = new World(); ExecutorService pool = Executors.newFixedThreadPool(50)) {
            String conf = bridgeConf(w, "jtsbr" + w.id.substring(0, 4));
            List<String> netns = new ArrayList<>();
            for (int i = 0; i < 50; i++) netns.add(w.container(i));
            List<Future<Sh.Run>> runs = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                Map<String, String> env = World.cniEnv("ADD", "ctr" + i, netns.get(i), "eth0", jcni.bin.toString());
                runs.add(pool.submit(() -> w.inHost(env, conf, jcni.plugin("bridge").toString())));
            }
            Set<String> ips = new HashSet<>();
            for (Future<Sh.Run> f : runs) {
                Sh.Run r = f.get(300, TimeUnit.SECONDS).ok();
                Map<String, Object> result = Json.parseObject(r.out());
                ips.add((String) Json.asObject(Json.asList(result.get("ips")).getFirst()).get("address"));
            }
            assertEquals(50, ips.size(), "distinct addresses: " + ips);
            assertEquals(50, allocations(w).size());

            List<Future<Sh.Run>> dels = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                Map<String, String> env = World.cniEnv("DEL", "ctr" + i, netns.get(i), "eth0", jcni.bin.toString());
                dels.add(pool.submit(() -> w.inHost(env, conf, jcni.plugin("bridge").toString())));
            }
            for (Future<Sh.Run> f : dels) f.get(300, TimeUnit.SECONDS).ok();
            assertEquals(List.of(), allocations(w));
            RetiredLinks.awaitNone(w.host); // DEL retires the veth; a detached process deletes it right after
            assertEquals("", w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip());
        }
    }

    /** Kill -9 at several points of an ADD; DEL (or GC) must still leave no allocation and no link. */
    @Test
    void killedAddIsCleanedByDelAndByGc() throws Exception {
        for (int attempt = 0; attempt < 6; attempt++) {
            try (World w = new World()) {
                String conf = bridgeConf(w, "jtsbr" + w.id.substring(0, 4));
                String netns = w.container(0);
                Map<String, String> env = World.cniEnv("ADD", "crash", netns, "eth0", jcni.bin.toString());
                String[] cmd = {"ip", "netns", "exec", w.host, jcni.plugin("bridge").toString()};
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
                pb.environment().putAll(env);
                Process p = pb.start();
                try (var in = p.getOutputStream()) {
                    in.write(conf.getBytes());
                }
                // spread the kill over the plugin's life: JVM start, IPAM, links, addresses
                Thread.sleep(60L + attempt * 70L);
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);

                if (attempt % 2 == 0) {
                    Map<String, String> del = World.cniEnv("DEL", "crash", netns, "eth0", jcni.bin.toString());
                    w.inHost(del, conf, jcni.plugin("bridge").toString()).ok();
                } else {
                    Map<String, String> gc = World.cniEnv("GC", "", "", "", jcni.bin.toString());
                    String gcConf = conf.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[],");
                    w.inHost(gc, gcConf, jcni.plugin("bridge").toString()).ok();
                }
                assertEquals(List.of(), allocations(w), "attempt " + attempt);
                RetiredLinks.awaitNone(w.host);
                assertEquals("", w.inHost(null, null, "ip", "-o", "link", "show", "type", "veth").ok().out().strip(), "attempt " + attempt);
            }
        }
    }
}
