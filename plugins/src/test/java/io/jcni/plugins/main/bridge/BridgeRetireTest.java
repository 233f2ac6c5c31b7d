package io.jcni.plugins.main.bridge;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.common.link.Links;
import io.jcni.plugins.skel.Background;
import io.jcni.plugins.skel.Phases;
import io.jcni.plugins.skel.PluginContext;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.NetWorld;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Bridge DEL with a {@link Background} (as in jcnid): the container's veth is retired (down, no
 * addresses, renamed) before the answer and deleted after it. DEL's contract must hold while the
 * deletion has not run yet: the addresses and the allocation are gone and the same container and
 * ifname can be added again at once. The background here holds every task until the test lets it
 * run, so each assertion sees the worst case.
 */
@Tag("root")
class BridgeRetireTest {
    private NetWorld w;
    /** Scheduled tasks by key, held until the test runs them; a key already waiting shares its task, as in jcnid. */
    private final Map<String, Runnable> held = new ConcurrentHashMap<>();
    private final Background background = (key, delay, task) -> {
        held.computeIfAbsent(key, k -> task.get());
        return true;
    };
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("host-local");
    }

    @AfterEach
    void tearDown() {
        runHeld();
        if (w != null) w.close();
    }

    private void runHeld() {
        for (String k : List.copyOf(held.keySet())) {
            Runnable r = held.remove(k);
            if (r != null) r.run();
        }
    }

    private String conf(String ranges) {
        return """
            {"cniVersion":"1.0.0","name":"rnet","type":"bridge","bridge":"rbr0","isGateway":true,
             "ipam":{"type":"host-local","dataDir":"%s","ranges":%s}}
            """.formatted(w.dir.resolve("data"), ranges);
    }

    /** One call in the host netns, on the calling thread's own handle of it (so calls run concurrently). */
    private void call(String command, String cid, String netns, String conf) {
        PluginContext ctx = Delegation.context(PluginRegistry::lookup, new PrintStream(stderr, true, StandardCharsets.UTF_8),
                new Phases(), background);
        try (Netns host = Netns.open(Netns.pathOf(w.hostName).toString())) {
            Skel.Outcome o = host.run(() -> Skel.run(PluginRegistry.lookup("bridge"), w.env(command, cid, netns, "eth0"),
                    conf.getBytes(StandardCharsets.UTF_8), ctx));
            assertEquals(0, o.exitCode(), command + " " + cid + ": " + o.stdout() + "\n" + stderr);
        }
    }

    /** The links of a container netns other than lo. */
    private static List<Link> links(String netns) {
        try (Netns ns = Netns.open(netns); Rtnl rt = Rtnl.open(ns)) {
            return rt.links().stream().filter(l -> !l.name().equals("lo")).toList();
        }
    }

    private static boolean hasAddresses(String netns, Link l) {
        try (Netns ns = Netns.open(netns); Rtnl rt = Rtnl.open(ns)) {
            for (Family f : Family.values()) {
                if (rt.addresses(l.index(), f).stream().anyMatch(a -> !a.address().isLinkLocalUnicast())) return true;
            }
            return false;
        }
    }

    /** Files of host-local's store naming the container (its allocations). */
    private long allocations(String cid) throws Exception {
        Path dir = w.dir.resolve("data/rnet");
        if (!Files.isDirectory(dir)) return 0;
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> !p.getFileName().toString().startsWith("last_reserved_ip") && !p.getFileName().toString().equals("lock"))
                    .filter(p -> {
                        try {
                            return Files.readString(p).lines().findFirst().orElse("").trim().equals(cid);
                        } catch (Exception e) {
                            return false;
                        }
                    }).count();
        }
    }

    /** After DEL and before the deletion ran: one retired link, down and without addresses; no eth0. */
    private void assertRetired(String netns, String cid) throws Exception {
        List<Link> links = links(netns);
        assertEquals(1, links.size(), "only the retired link: " + links);
        Link retired = links.getFirst();
        assertEquals(Links.retiredName(retired.index()), retired.name());
        assertFalse(retired.up(), "the retired link is down");
        assertFalse(hasAddresses(netns, retired), "the retired link has no addresses");
        assertEquals(0, allocations(cid), "the allocation is released");
    }

    @Test
    void dualStackDelRemovesAddressesAtOnceAndTheDeletionFollows() throws Exception {
        String c = w.container();
        String conf = conf("[[{\"subnet\":\"10.61.0.0/24\"}],[{\"subnet\":\"fd61::/64\"}]]");
        call("ADD", "r1", c, conf);
        assertEquals(2, allocations("r1"));
        call("DEL", "r1", c, conf);
        assertRetired(c, "r1");
        assertEquals(1, held.size());
        call("ADD", "r1", c, conf);
        assertTrue(links(c).stream().anyMatch(l -> l.name().equals("eth0")));
        runHeld();
        assertEquals(List.of("eth0"), links(c).stream().map(Link::name).toList());
        call("DEL", "r1", c, conf);
        runHeld();
        assertEquals(List.of(), links(c));
        // the host ends went with their peers: only the bridge is left in the host netns
        try (Rtnl host = Rtnl.open(w.host)) {
            assertEquals(List.of("rbr0"), host.links().stream().map(Link::name).filter(n -> !n.equals("lo")).toList());
        }
    }

    @Test
    void fiftyConcurrentDelsThenAddsOfTheSameContainerAndIfname() throws Exception {
        int n = 50;
        String conf = conf("[[{\"subnet\":\"10.62.0.0/24\"}]]");
        List<String> netns = new ArrayList<>();
        for (int i = 0; i < n; i++) netns.add(w.container());
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String cid = "rc" + i, ns = netns.get(i);
                runs.add(pool.submit(() -> {
                    call("ADD", cid, ns, conf);
                    call("DEL", cid, ns, conf);
                    assertRetired(ns, cid);
                    call("ADD", cid, ns, conf);
                    assertEquals(1, allocations(cid));
                    return null;
                }));
            }
            for (Future<?> f : runs) f.get();
            assertEquals(1, held.size(), "the 50 DELs share one deletion: " + held.keySet());
            // one request deletes the 50 retired pairs, while the second attachments live
            runHeld();
            for (String ns : netns) assertEquals(List.of("eth0"), links(ns).stream().map(Link::name).toList());
            runs.clear();
            for (int i = 0; i < n; i++) {
                String cid = "rc" + i, ns = netns.get(i);
                runs.add(pool.submit(() -> {
                    call("DEL", cid, ns, conf);
                    return null;
                }));
            }
            for (Future<?> f : runs) f.get();
            runHeld();
            for (String ns : netns) assertEquals(List.of(), links(ns));
            for (int i = 0; i < n; i++) assertEquals(0, allocations("rc" + i));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aRetiredPairGoesWithItsNamespaceAndTheSweepFindsNothingLeft() throws Exception {
        String c = w.container();
        String conf = conf("[[{\"subnet\":\"10.64.0.0/24\"}]]");
        call("ADD", "r4", c, conf);
        call("DEL", "r4", c, conf);
        assertRetired(c, "r4");
        w.deleteContainer(c); // the runtime's next step: the kernel removes the pair with the namespace
        try (Rtnl host = Rtnl.open(w.host)) {
            for (int i = 0; i < 100 && host.links().stream().anyMatch(l -> "veth".equals(l.kind())); i++) Thread.sleep(50);
            assertEquals(List.of(), host.links().stream().filter(l -> "veth".equals(l.kind())).toList());
        }
        runHeld(); // nothing left to delete: no error
    }

    @Test
    void withoutBackgroundTheLinkIsDeletedBeforeTheAnswer() {
        String c = w.container();
        String conf = conf("[[{\"subnet\":\"10.63.0.0/24\"}]]");
        w.ok("bridge", w.env("ADD", "r3", c, "eth0"), conf);
        w.ok("bridge", w.env("DEL", "r3", c, "eth0"), conf);
        assertEquals(List.of(), links(c));
    }
}
