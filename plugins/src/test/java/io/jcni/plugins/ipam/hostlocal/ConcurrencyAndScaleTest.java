package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Concurrency safety and the "ADD does not read every reservation" requirement. Never timed. */
class ConcurrencyAndScaleTest {
    @TempDir
    Path dataDir;

    static IpamConfig config(Path dataDir, String subnet) {
        return IpamConfig.load("{\"cniVersion\":\"1.1.0\",\"name\":\"bignet\",\"ipam\":{\"type\":\"host-local\","
                + "\"dataDir\":\"" + dataDir + "\",\"subnet\":\"" + subnet + "\"}}", null);
    }

    @Test
    void fiftyThreadsGetFiftyDistinctAddresses() throws Exception {
        IpamConfig c = config(dataDir, "10.9.0.0/24");
        ExecutorService pool = Executors.newFixedThreadPool(50);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Allocation>> futures = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            String id = "container-" + i;
            futures.add(pool.submit(() -> {
                start.await();
                return HostLocal.add(c, id, "eth0").ips().get(0);
            }));
        }
        start.countDown();
        Set<IpAddr> got = new HashSet<>();
        for (Future<Allocation> f : futures) got.add(f.get().address());
        pool.shutdown();
        assertEquals(50, got.size());
        try (DiskStore s = DiskStore.open(dataDir, "bignet")) {
            assertEquals(got, s.reservedIps());
            for (int i = 0; i < 50; i++) assertEquals(1, s.getById("container-" + i, "eth0").size());
        }
    }

    /** Entry point for {@link #severalProcessesGetDistinctAddresses}. */
    public static void main(String[] args) throws Exception {
        IpamConfig c = config(Path.of(args[0]), "10.9.0.0/24");
        for (int i = 0; i < Integer.parseInt(args[2]); i++) {
            System.out.println(HostLocal.add(c, args[1] + "-" + i, "eth0").ips().get(0).address());
        }
    }

    @Test
    void severalProcessesGetDistinctAddresses() throws Exception {
        List<Process> procs = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            procs.add(new ProcessBuilder(Jvm.command(Launcher.Kind.PLUGIN, ConcurrencyAndScaleTest.class.getName(),
                    dataDir.toString(), "proc" + p, "15")).redirectErrorStream(true).start());
        }
        ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        for (Process proc : procs) {
            String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, proc.waitFor(), out);
            lines.addAll(out.lines().filter(l -> !l.isBlank()).toList());
        }
        assertEquals(45, lines.size());
        assertEquals(45, new HashSet<>(lines).size(), "duplicate address handed out: " + lines);
    }

    /**
     * 60,000 reservations in a /16, as a busy node would have them, written as the reference
     * plugin writes them (so none of them is in jcni's index) and without last_reserved_ip.
     */
    @Test
    void addInABusySlash16ReadsAHandfulOfFiles() throws Exception {
        Path net = dataDir.resolve("bignet");
        Files.createDirectories(net);
        IpAddr ip = IpAddr.parse("10.0.0.2");
        for (int i = 0; i < 60_000; i++) {
            Files.writeString(net.resolve(ip.toString()), "other-" + i + "\r\neth0");
            ip = ip.next();
        }
        IpamConfig c = config(dataDir, "10.0.0.0/16");
        try (DiskStore store = DiskStore.open(dataDir, "bignet")) {
            // No last_reserved_ip: the walk starts at 10.0.0.2 and runs into the dense stretch,
            // which it then skips by listing names once -- still without reading reservations.
            Allocation first = HostLocal.allocate(c, store, "newcomer", "eth0").get(0);
            assertEquals("10.0.234.98", first.address().toString()); // 10.0.0.2 + 60,000
            assertEquals(0, store.directoryScans());
            assertTrue(store.reservationReads() <= 2, "reads: " + store.reservationReads());

            // The common case: round-robin continues right after last_reserved_ip.
            long before = store.reservationReads();
            Allocation second = HostLocal.allocate(c, store, "second", "eth0").get(0);
            assertEquals("10.0.234.99", second.address().toString());
            assertEquals(0, store.directoryScans());
            assertTrue(store.reservationReads() - before <= 2, "reads: " + (store.reservationReads() - before));

            // DEL of a jcni-made attachment goes through the index too.
            before = store.reservationReads();
            assertEquals(List.of(first.address()), HostLocal.release(store, "newcomer", "eth0"));
            assertEquals(0, store.directoryScans());
            assertTrue(store.reservationReads() - before <= 2);

            // DEL of an attachment jcni never saw falls back to the reference behaviour: one scan.
            assertEquals(List.of(IpAddr.parse("10.0.0.2")), HostLocal.release(store, "other-0", "eth0"));
            assertEquals(1, store.directoryScans());
        }
    }
}
