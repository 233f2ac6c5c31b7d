package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * cluster-ipam against a real etcd from 5 host namespaces at once: 1,000 concurrent allocations
 * give 1,000 distinct addresses; DEL frees; kill -9 in the middle of allocations then GC leaves
 * exactly the allocations of the attachments that exist.
 */
@Tag("root")
class ClusterIpamLabTest {
    private static final int HOSTS = 5, PER_HOST = 200;
    private static final String RANGE = "10.72.0.0/21"; // 2,046 addresses: half of them taken, so racers collide

    @Test
    void thousandConcurrentAllocationsNoDuplicatesAndGcAfterKill() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.66.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= HOSTS; i++) lab.addHost(i);

            List<Process> loads = new ArrayList<>();
            for (int i = 1; i <= HOSTS; i++) loads.add(load(lab, i, "add", "h" + i, PER_HOST));
            Map<String, String> ipOf = new HashMap<>();
            for (int i = 1; i <= HOSTS; i++) {
                assertTrue(loads.get(i - 1).waitFor(180, TimeUnit.SECONDS), "host " + i + " finished");
                for (String line : Files.readAllLines(out(lab, i, "add", "h" + i))) {
                    assertTrue(line.startsWith("OK "), line);
                    String[] f = line.split(" ");
                    ipOf.put(f[1], f[2]);
                }
            }
            assertEquals(HOSTS * PER_HOST, ipOf.size(), "every allocation answered");
            assertEquals(HOSTS * PER_HOST, new HashSet<>(ipOf.values()).size(), "0 duplicates");
            assertEquals(HOSTS * PER_HOST, keys(lab, "ips/").size());

            // DEL of host 1's allocations frees exactly those
            assertTrue(load(lab, 1, "del", "h1", PER_HOST).waitFor(180, TimeUnit.SECONDS));
            assertEquals((HOSTS - 1) * PER_HOST, keys(lab, "ips/").size());
            assertEquals((HOSTS - 1) * PER_HOST, keys(lab, "owners/").size());

            // kill -9 two hosts in the middle of a new round, then GC with the attachments that exist
            List<Process> round = new ArrayList<>();
            for (int i = 1; i <= HOSTS; i++) round.add(load(lab, i, "add", "k" + i, PER_HOST));
            Lab.waitFor("some allocations of the second round", java.time.Duration.ofSeconds(60),
                    () -> Files.size(out(lab, 1, "add", "k1")) > 0 && Files.size(out(lab, 2, "add", "k2")) > 0);
            round.get(0).destroyForcibly();
            round.get(1).destroyForcibly();
            for (Process p : round) assertTrue(p.waitFor(180, TimeUnit.SECONDS));
            Set<String> valid = new HashSet<>();
            for (int i = 2; i <= HOSTS; i++) valid.addAll(ids(lab, i, "h")); // first round, host 1 deleted
            for (int i = 1; i <= HOSTS; i++) valid.addAll(ids(lab, i, "k"));
            Path validFile = lab.dir.resolve("valid");
            Files.write(validFile, valid);
            Process gc = new ProcessBuilder(cmd(lab, 1, "gc", validFile.toString())).redirectErrorStream(true)
                    .redirectOutput(lab.dir.resolve("gc.out").toFile()).start();
            assertTrue(gc.waitFor(120, TimeUnit.SECONDS));
            assertTrue(Files.readString(lab.dir.resolve("gc.out")).startsWith("GC 0"), Files.readString(lab.dir.resolve("gc.out")));
            List<String> owners = keys(lab, "owners/");
            assertEquals(valid.size(), owners.size(), "0 leaked: one allocation per existing attachment");
            assertEquals(valid.size(), keys(lab, "ips/").size());
            for (String k : owners) assertTrue(valid.contains(k.substring(k.indexOf("owners/") + 7, k.lastIndexOf('/'))), k);
        }
    }

    /** The containerIDs host i's load printed OK for, of ids starting with {@code tag}. */
    private static List<String> ids(Lab lab, int i, String tag) throws Exception {
        List<String> out = new ArrayList<>();
        Path f = out(lab, i, "add", tag + i);
        for (String line : Files.readAllLines(f)) {
            String[] p = line.split(" ");
            if (p.length >= 3 && p[0].equals("OK")) out.add(p[1]);
        }
        return out;
    }

    private static Path out(Lab lab, int i, String mode, String tag) {
        return lab.dir.resolve(lab.host(i)).resolve(mode + "-" + tag + ".out");
    }

    private static Process load(Lab lab, int i, String mode, String tag, int count) throws Exception {
        return new ProcessBuilder(cmd(lab, i, mode, tag, Integer.toString(count), "16")).redirectErrorStream(true)
                .redirectOutput(out(lab, i, mode, tag).toFile()).start();
    }

    private static List<String> cmd(Lab lab, int i, String mode, String... rest) {
        // jcnid's options: a load generator makes many calls in one long-lived JVM, as jcnid does.
        List<String> c = lab.inHost(i, Jvm.command(Launcher.Kind.DAEMON, IpamLoad.class.getName(), mode, Lab.ETCD, RANGE));
        c.addAll(List.of(rest));
        return c;
    }

    private static List<String> keys(Lab lab, String sub) throws Exception {
        Lab.Out o = lab.etcdctl("get", "--prefix", "--keys-only", "/lab-ipam/10.72.0.0-21/" + sub);
        assertEquals(0, o.exit(), o.stdout());
        return o.stdout().lines().filter(l -> !l.isBlank()).toList();
    }
}
