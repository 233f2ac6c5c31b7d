package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real, detached jcnid under 500 clients that each announce a 16 MiB request and then send
 * nothing or trickle: its resident memory stays bounded, it stays alive, and a plugin call is
 * served meanwhile and after. Before the budget, jcnid allocated every announced body up front
 * (450 such clients: OutOfMemoryError with a 6 GB heap).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MemoryBoundTest {
    static final int CLIENTS = 500;
    static final long RSS_LIMIT_KB = 300 << 10;

    @TempDir
    Path tmp;

    private String[] args(String cmd) {
        return new String[] {cmd, "--socket", tmp.resolve("run/jcnid.sock").toString(), "--log-file",
                tmp.resolve("jcnid.log").toString(), "--drain-timeout", "5"};
    }

    private int control(String cmd, StringBuilder output) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        int rc = DaemonControl.run(args(cmd), ps, ps);
        output.append(out.toString(StandardCharsets.UTF_8));
        return rc;
    }

    static long rssKb(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IOException("no VmRSS for " + pid);
    }

    @Test
    void fiveHundredClientsAnnouncing16MiBLeaveJcnidSmallAndServing() throws Exception {
        StringBuilder o = new StringBuilder();
        assertEquals(0, control("start", o), o.toString());
        ProcessHandle jcnid = ProcessHandle.of(Long.parseLong(Files.readString(tmp.resolve("run/jcnid.pid")).trim())).orElseThrow();
        List<SocketChannel> clients = new ArrayList<>();
        Path socket = tmp.resolve("run/jcnid.sock");
        try {
            List<String> jvm = Arrays.asList(jcnid.info().arguments().orElse(new String[0]));
            assertTrue(jvm.contains(DaemonControl.HEAP_LIMIT) && jvm.contains(DaemonControl.EXIT_ON_OOM), "crash-only, bounded heap: " + jvm);
            long before = rssKb(jcnid.pid());
            byte[] header = ByteBuffer.allocate(Protocol.HEADER_BYTES).put(Protocol.MAGIC).put((byte) 1).put((byte) Protocol.KIND_EXEC)
                    .putShort((short) 0).putInt(Protocol.MAX_BODY).array();
            for (int i = 0; i < CLIENTS; i++) {
                SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket));
                clients.add(ch);
                Protocol.writeFully(ch, ByteBuffer.wrap(header));
            }
            long peak = 0;
            // Half of them trickle 1 KiB a round while the others stay silent, for 5 rounds.
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < CLIENTS; i += 2) Protocol.writeFully(clients.get(i), ByteBuffer.wrap(new byte[1024]));
                Thread.sleep(500);
                peak = Math.max(peak, rssKb(jcnid.pid()));
            }
            JcnidClient.Reply r = JcnidClient.exec(socket, "static", TestDaemon.env("ADD", "c1"),
                    TestDaemon.STATIC_CONF.getBytes(StandardCharsets.UTF_8));
            assertFalse(r.declined(), "served by jcnid while the clients hang on");
            assertEquals(0, r.result().exitCode(), r.result().stdoutText());
            peak = Math.max(peak, rssKb(jcnid.pid()));
            System.out.printf("jcnid VmRSS: %.1f MB before, peak %.1f MB with %d clients announcing 16 MiB%n",
                    before / 1024.0, peak / 1024.0, CLIENTS);
            assertTrue(peak < RSS_LIMIT_KB, "VmRSS peaked at " + peak + " kB");

            for (SocketChannel ch : clients) {
                try {
                    assertEquals(-1, ch.read(ByteBuffer.allocate(1)), "dropped at the deadline, unanswered");
                } catch (java.net.SocketException e) {
                    // reset: dropped too
                }
            }
            assertTrue(jcnid.isAlive());
            String metrics = JcnidClient.metrics(socket);
            // The client sees the close just before the connection's thread counts the drop.
            for (int i = 0; i < 500 && !metrics.contains("jcnid_deadline_drops_total " + CLIENTS + "\n"); i++) {
                Thread.sleep(10);
                metrics = JcnidClient.metrics(socket);
            }
            assertTrue(metrics.contains("jcnid_deadline_drops_total " + CLIENTS + "\n"), metrics);
            r = JcnidClient.exec(socket, "static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF.getBytes(StandardCharsets.UTF_8));
            assertEquals(0, r.result().exitCode(), r.result().stdoutText());
            System.out.printf("jcnid VmRSS after they were dropped: %.1f MB%n", rssKb(jcnid.pid()) / 1024.0);
            assertEquals(0, control("stop", o), o.toString());
        } finally {
            for (SocketChannel ch : clients) ch.close();
            Optional.of(jcnid).filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
