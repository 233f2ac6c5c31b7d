package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.daemon.JcnidClient;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * kill -9 at random points (fixed seed) of {@code jcni add} of the full chain: the runtime and
 * every plugin process it started die at once, as on a crash of the runtime or an OOM kill of its
 * cgroup. Then {@code jcni del} (even points) or {@code jcni gc --valid <bystander>} (odd points)
 * must leave nothing: every category of {@link Leaks} back to what it was before the ADD. A
 * bystander container stays attached throughout, so a cleanup that takes too much shows as a
 * negative difference. Through jcnid, every fifth point also kills the daemon.
 */
@Tag("root")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // through jcnid first: a long run that must stop early covers it first
class KillPointsTest {
    private static final int PROGRESS_EVERY = 50;
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    @Order(2)
    void killedStandaloneAddsLeaveNothing() throws Exception {
        run("standalone", Chaos.size("killPoints", 12, 200), false);
    }

    @Test
    @Order(1)
    void killedAddsThroughJcnidLeaveNothing() throws Exception {
        run("jcnid", Chaos.size("killPoints", 24, 200), true);
    }

    private void run(String mode, int points, boolean daemon) throws Exception {
        long t0 = System.nanoTime();
        Random rnd = new Random(Chaos.SEED ^ mode.hashCode());
        List<String> leaks = new ArrayList<>();
        int hits = 0;
        int attempts = 0;
        boolean stoppedEarly = false;
        long addNanos;
        Leaks footprint;
        try (World w = new World()) {
            ChainNetwork net = new ChainNetwork(w, jcni);
            Jcnid jcnid = daemon ? Jcnid.start(jcni, w.dir.resolve("jcnid.log")) : null;
            try {
                String bystander = w.container(9999);
                net.run(9999, 300, "add", net.name, bystander).ok();
                // One uninterrupted ADD and DEL: how long an ADD takes in this mode, so kills spread over all of it.
                String probe = w.container(9998);
                long a0 = System.nanoTime();
                net.run(9998, 300, "add", net.name, probe).ok();
                addNanos = System.nanoTime() - a0;
                net.run(9998, 300, "del", net.name, probe).ok();
                w.deleteNamespace(name(probe));
                Leaks base = Leaks.count(net, List.of(bystander));
                footprint = base;
                assertEveryCategoryCounted(base);

                // A kill after the ADD ended is no kill point: go on until `points` kills hit a running ADD (at most 3x the attempts).
                Instant stopAt = Chaos.stopAt("killPoints." + mode);
                for (int i = 0; hits < points && i < 3 * points; i++) {
                    if (stopAt != null && Instant.now().isAfter(stopAt)) {
                        stoppedEarly = true;
                        break;
                    }
                    attempts = i + 1;
                    String netns = w.container(i);
                    java.util.SortedSet<String> filesBefore = Leaks.fileNames(net);
                    long delay = (long) (rnd.nextDouble() * addNanos);
                    boolean killDaemon = daemon && i % 5 == 4;
                    if (killAdd(net, i, netns, delay, killDaemon ? jcnid : null)) hits++;
                    if (daemon && !killDaemon) awaitIdle();
                    String how = i % 2 == 0 ? "del" : "gc";
                    Sh.Run r;
                    if (i % 2 == 0) {
                        r = net.run(i, 300, "del", net.name, netns);
                    } else {
                        // GC collects attachments whose container is gone: its namespace (and the veth ends in it) first.
                        w.deleteNamespace(name(netns));
                        r = net.run(i, 300, "gc", net.name, "--valid", ChainNetwork.containerId(bystander) + "/eth0");
                    }
                    Leaks left = Leaks.count(net, List.of(bystander, netns)).minus(base);
                    if (r.rc() != 0 || !left.isZero()) {
                        java.util.SortedSet<String> newFiles = Leaks.fileNames(net);
                        newFiles.removeAll(filesBefore);
                        String links = Sh.ok("ip", "-n", w.host, "-o", "link", "show").replaceAll("(?m)^\\d+: ([^:@]+)[:@].*$", "$1").replace("\n", " ");
                        leaks.add("point " + i + " (kill after " + delay / 1_000_000 + " ms, then " + how + (killDaemon ? ", jcnid killed" : "")
                                + "): " + left + (newFiles.isEmpty() ? "" : " new files " + newFiles)
                                + (left.links() != 0 ? " host links now: " + links : "")
                                + (r.rc() != 0 ? " cleanup exit " + r.rc() + ": " + r.err().strip() : ""));
                        base = Leaks.count(net, List.of(bystander)); // judge the next point on its own
                        System.out.printf("chaos kill points (%s): leak %s%n", mode, leaks.getLast());
                    }
                    // A long run shows how far it got, so a run cut short still reports exact counts.
                    if (attempts % PROGRESS_EVERY == 0) {
                        System.out.printf("chaos kill points (%s): %d kills so far (%d attempts), %d leaks, %s%n",
                                mode, hits, attempts, leaks.size(), Chaos.seconds(t0));
                    }
                    w.deleteNamespace(name(netns));
                    if (killDaemon) {
                        Jcnid.stop(jcni);
                        jcnid = Jcnid.start(jcni, w.dir.resolve("jcnid.log"));
                    }
                }
                net.run(9999, 300, "del", net.name, bystander).ok();
            } finally {
                if (daemon) Jcnid.stop(jcni);
            }
        }
        System.out.printf("chaos kill points (%s): %d kill points tried (kills that hit a running ADD; %d attempts), an uninterrupted ADD %d ms;"
                + " leaks found: %d (one attachment's footprint: %s); %s%s%n",
                mode, hits, attempts, addNanos / 1_000_000, leaks.size(), footprint, Chaos.seconds(t0),
                stoppedEarly ? "; stopped early by -Djcni.chaos.stopAt.killPoints." + mode + " after " + hits + " of " + points + " kills" : "");
        assertEquals(List.of(), leaks, "kill points that leaked or whose cleanup failed (" + mode + ")");
        if (!stoppedEarly) assertEquals(points, hits, "kills that hit a running ADD (" + mode + ")");
    }

    /** One attached container shows in every category, so a zero difference means something. */
    static void assertEveryCategoryCounted(Leaks one) {
        assertTrue(one.addresses() > 0 && one.links() > 0 && one.nftElements() > 0 && one.tcObjects() > 0
                && one.cacheFiles() > 0 && one.stateFiles() > 0, "an attachment is seen in every category: " + one);
    }

    private static String name(String netnsPath) {
        return java.nio.file.Path.of(netnsPath).getFileName().toString();
    }

    /**
     * Starts {@code jcni add} in a session of its own and, after {@code delayNanos}, SIGKILLs the
     * whole process group (the runtime and any plugin it started), and the daemon when given.
     * Returns whether the ADD was still running when it was killed.
     */
    private static boolean killAdd(ChainNetwork net, int container, String netns, long delayNanos, Jcnid daemon) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("setsid"));
        cmd.addAll(List.of(net.cli("add", net.name, netns)));
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().putAll(net.cliEnv(container));
        Process p = pb.start();
        p.getOutputStream().close();
        TimeUnit.NANOSECONDS.sleep(delayNanos);
        boolean running = p.isAlive();
        Sh.run("kill", "-KILL", "--", "-" + p.pid());
        if (daemon != null) daemon.kill();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "killed jcni add exits");
        for (int i = 0; i < 300 && Sh.run("pgrep", "-g", Long.toString(p.pid())).rc() == 0; i++) Thread.sleep(10);
        return running;
    }

    /** A plugin whose shim was killed still runs to its end inside jcnid: wait for it, as its DEL would. */
    private static void awaitIdle() throws Exception {
        for (int i = 0; i < 600; i++) {
            // the connection asking is one of those in flight
            if (JcnidClient.metrics(jcni.socket).contains("\njcnid_in_flight_requests 1\n")) return;
            Thread.sleep(50);
        }
        fail("jcnid still busy after 30 s");
    }
}
