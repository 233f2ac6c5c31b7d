package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A node "reboot": containers are attached to the full chain through jcnid, then jcnid dies, its
 * runtime directory is wiped, every container namespace disappears and the host's namespace comes
 * back empty: no links but lo, no ruleset. (A node's host namespace is init_net, whose identity
 * survives a reboot; so the test keeps the namespace and wipes what is in it.) What survives is
 * what lives on disk: IPAM reservations, nft ownership state and, unless the runtime keeps it on
 * tmpfs, the result cache. GC must reconcile all of it to zero. A third case replaces the host
 * namespace itself by a new one (jcni running in a namespace that is recreated): the state kept
 * for the old one must not stay behind for good.
 */
@Tag("root")
class RebootTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    /** {@code jcni gc NET --valid none}: no attachment is in use; the cached ones are DELeted, then the plugins GC. */
    @Test
    void jcniGcAfterRebootReconcilesToZero() throws Exception {
        reboot(false);
    }

    /**
     * The runtime's result cache was on tmpfs too: only the plugins' own GC can find what to free.
     * The runtime GCs as a CRI runtime does when it starts: with the attachments it knows alive
     * (none), i.e. {@code cni.dev/valid-attachments: []}.
     */
    @Test
    void pluginGcAfterRebootWithoutResultCacheReconcilesToZero() throws Exception {
        reboot(true);
    }

    /**
     * The namespace the plugins ran in is gone for good and a new one takes its place: GC must still
     * free everything, including the nft state kept for the old namespace (collected by the plugins'
     * GC, see ElementStore's DeadNamespaceState).
     */
    @Test
    void stateOfAHostNamespaceThatIsGoneIsCollected() throws Exception {
        reboot(true, true);
    }

    private void reboot(boolean wipeCache) throws Exception {
        reboot(wipeCache, false);
    }

    private void reboot(boolean wipeCache, boolean newHostNamespace) throws Exception {
        int n = Chaos.size("rebootContainers", 20, 100);
        long t0 = System.nanoTime();
        try (World w = new World()) {
            ChainNetwork net = new ChainNetwork(w, jcni);
            HostRuntime rt = new HostRuntime(net);
            List<String> netns = new ArrayList<>();
            for (int i = 0; i < n; i++) netns.add(w.container(i));
            Jcnid jcnid = Jcnid.start(jcni, w.dir.resolve("jcnid.log"));
            try {
                try (ExecutorService pool = Executors.newFixedThreadPool(10)) {
                    List<Future<?>> adds = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        int c = i;
                        adds.add(pool.submit(() -> rt.add(c, netns.get(c))));
                    }
                    for (Future<?> f : adds) f.get(300, TimeUnit.SECONDS);
                }
                Leaks before = Leaks.count(net, netns);
                assertEquals(n, before.addresses(), "attached: " + before);

                // The reboot.
                jcnid.kill();
                try (Stream<Path> run = Files.list(jcni.socket.getParent())) {
                    for (Path p : run.toList()) Files.deleteIfExists(p);
                }
                for (String path : netns) w.deleteNamespace(Path.of(path).getFileName().toString());
                if (newHostNamespace) {
                    w.deleteNamespace(w.host);
                    w.namespace(w.host);
                } else {
                    Sh.ok("ip", "netns", "exec", w.host, "nft", "flush", "ruleset");
                    for (String l : Sh.lines(Sh.ok("ip", "-n", w.host, "-o", "link", "show"))) {
                        String name = l.split(": ")[1].split("@")[0];
                        if (!name.equals("lo")) Sh.quiet("ip", "-n", w.host, "link", "del", name); // a veth may go with its peer meanwhile
                    }
                }
                if (wipeCache) Sh.ok("rm", "-rf", net.cacheDir.toString());
                jcnid = Jcnid.start(jcni, w.dir.resolve("jcnid.log"));
                Leaks survived = Leaks.count(net, List.of());

                String gcError = "";
                if (wipeCache) {
                    try {
                        rt.cni.gcNetworkList(rt.list, List.of());
                    } catch (RuntimeException e) {
                        gcError = e.toString() + " " + String.join(" ", rt.stderr);
                    }
                } else {
                    Sh.Run gc = net.run(0, 300, "gc", net.name, "--valid", "none");
                    if (gc.rc() != 0) gcError = "exit " + gc.rc() + ": " + gc.err() + gc.out();
                }
                Leaks left = Leaks.count(net, List.of());
                System.out.printf("chaos reboot (%s): %d containers; attached: %s; after the reboot: %s; after %s: %s; %s%n",
                        (wipeCache ? "result cache wiped" : "result cache kept") + (newHostNamespace ? ", host namespace replaced" : ""), n, before, survived,
                        wipeCache ? "GC with no valid attachment" : "jcni gc", left, Chaos.seconds(t0));
                assertEquals("", gcError, "GC fails");
                assertEquals(new Leaks(0, 0, 0, 0, 0, 0), left, "left after GC: " + Leaks.fileNames(net).stream().limit(30).toList());
            } finally {
                jcnid.close();
            }
        }
    }
}
