package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
            // the host index too (its entries are written with the allocation, in its nested transaction
            // when concurrent ADDs share a request): all of an attachment's keys or none, even killed
            String hostname = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
            if (io.jcni.types.Names.isCniName(hostname)) {
                assertEquals(valid.size(), keys(lab, "/lab-ipam/hosts/" + hostname + "/").size(), "one index entry per allocation");
            }
        }
    }

    /**
     * Two range sets (IPv4 and IPv6, each 510 addresses for 450 allocations, so racers collide):
     * one address of each family per attachment, 0 duplicates in either, both keys per address.
     * An allocation written before range sets existed (the one-range layout) is still read: a
     * retried ADD keeps its IPv4 address and adds an IPv6 one, and DEL releases both. IPv6-only works.
     */
    @Test
    void dualStackAllocationsNoDuplicatesAndOldRecordsStillRead() throws Exception {
        String v4 = "10.74.0.0/23", v6 = "fd00:74::/119", both = v4 + "," + v6;
        int hosts = 3, perHost = 150;
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.66.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= hosts; i++) lab.addHost(i);
            // an allocation as the one-range layout wrote it
            assertEquals(0, lab.etcdctl("put", "/lab-ipam/10.74.0.0-23/ips/10.74.1.200", "old-1/eth0").exit());
            assertEquals(0, lab.etcdctl("put", "/lab-ipam/10.74.0.0-23/owners/old-1/eth0", "10.74.1.200").exit());

            List<Process> loads = new ArrayList<>();
            for (int i = 1; i <= hosts; i++) loads.add(load(lab, i, both, "add", "d" + i, perHost));
            Set<String> ips4 = new HashSet<>(), ips6 = new HashSet<>();
            for (int i = 1; i <= hosts; i++) {
                assertTrue(loads.get(i - 1).waitFor(180, TimeUnit.SECONDS), "host " + i + " finished");
                for (String line : Files.readAllLines(out(lab, i, "add", "d" + i))) {
                    assertTrue(line.startsWith("OK "), line);
                    String[] ips = line.split(" ")[2].split(",");
                    assertEquals(2, ips.length, line);
                    assertTrue(ips[0].startsWith("10.74.") && ips[1].startsWith("fd00:74::"), line);
                    ips4.add(ips[0]);
                    ips6.add(ips[1]);
                }
            }
            assertEquals(hosts * perHost, ips4.size(), "0 IPv4 duplicates");
            assertEquals(hosts * perHost, ips6.size(), "0 IPv6 duplicates");
            assertFalse(ips4.contains("10.74.1.200"), "the old allocation's address is not handed out again");
            assertEquals(hosts * perHost + 1, keys(lab, "/lab-ipam/10.74.0.0-23/ips/").size());
            assertEquals(hosts * perHost, keys(lab, "/lab-ipam/fd00:74::-119/owners/").size());

            String retried = one(lab, both, "ADD", "old-1");
            assertTrue(retried.startsWith("OK old-1 10.74.1.200,fd00:74::"), retried);
            assertEquals(1, keys(lab, "/lab-ipam/fd00:74::-119/owners/old-1/").size(), "the IPv6 address added to the old allocation");
            assertEquals("OK old-1 -", one(lab, both, "DEL", "old-1"));
            assertEquals(List.of(), keys(lab, "/lab-ipam/10.74.0.0-23/ips/10.74.1.200"));
            assertEquals(List.of(), keys(lab, "/lab-ipam/fd00:74::-119/owners/old-1/"));

            assertTrue(load(lab, 1, both, "del", "d1", perHost).waitFor(180, TimeUnit.SECONDS));
            for (String line : Files.readAllLines(out(lab, 1, "del", "d1"))) assertTrue(line.startsWith("OK "), line);
            assertEquals((hosts - 1) * perHost, keys(lab, "/lab-ipam/10.74.0.0-23/ips/").size(),
                    () -> "IPv4 address keys left after host 1's DELs: " + leftOf(lab, "/lab-ipam/10.74.0.0-23/ips/", "d1-"));
            assertEquals((hosts - 1) * perHost, keys(lab, "/lab-ipam/fd00:74::-119/ips/").size());

            String v6only = one(lab, "fd00:75::/120", "ADD", "six-1");
            assertTrue(v6only.matches("OK six-1 fd00:75::[0-9a-f]+"), v6only);
            assertEquals(1, keys(lab, "/lab-ipam/fd00:75::-120/ips/").size());
        }
    }

    /** The keys under {@code prefix} whose value starts with {@code owner}, with their values (a failure's account). */
    private static String leftOf(Lab lab, String prefix, String owner) {
        try {
            Lab.Out o = lab.etcdctl("get", "--prefix", prefix);
            List<String> l = o.stdout().lines().toList(), out = new ArrayList<>();
            for (int i = 0; i + 1 < l.size(); i += 2) if (l.get(i + 1).startsWith(owner)) out.add(l.get(i) + "=" + l.get(i + 1));
            return out.toString();
        } catch (Exception e) {
            return "(etcdctl failed: " + e + ")";
        }
    }

    /** One ADD or DEL of {@code id} (ifname eth0) from host 1; the line IpamLoad printed. */
    private static String one(Lab lab, String range, String command, String id) throws Exception {
        Path o = lab.dir.resolve("one-" + command + "-" + id + ".out");
        List<String> c = cmdIn(lab, 1, range, "one", command, id, "/var/run/netns/none", lab.host(1));
        Process p = new ProcessBuilder(c).redirectErrorStream(true).redirectOutput(o.toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return Files.readString(o).strip();
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
        return load(lab, i, RANGE, mode, tag, count);
    }

    private static Process load(Lab lab, int i, String range, String mode, String tag, int count) throws Exception {
        return new ProcessBuilder(cmdIn(lab, i, range, mode, tag, Integer.toString(count), "16")).redirectErrorStream(true)
                .redirectOutput(out(lab, i, mode, tag).toFile()).start();
    }

    private static List<String> cmd(Lab lab, int i, String mode, String... rest) {
        return cmdIn(lab, i, RANGE, mode, rest);
    }

    private static List<String> cmdIn(Lab lab, int i, String range, String mode, String... rest) {
        // jcnid's options: a load generator makes many calls in one long-lived JVM, as jcnid does.
        List<String> c = lab.inHost(i, Jvm.command(Launcher.Kind.DAEMON, IpamLoad.class.getName(), mode, Lab.ETCD, range));
        c.addAll(List.of(rest));
        return c;
    }

    private static List<String> keys(Lab lab, String sub) throws Exception {
        return sub.startsWith("/") ? prefixKeys(lab, sub) : prefixKeys(lab, "/lab-ipam/10.72.0.0-21/" + sub);
    }

    private static List<String> prefixKeys(Lab lab, String prefix) throws Exception {
        Lab.Out o = lab.etcdctl("get", "--prefix", "--keys-only", prefix);
        assertEquals(0, o.exit(), o.stdout());
        return o.stdout().lines().filter(l -> !l.isBlank()).toList();
    }
}
