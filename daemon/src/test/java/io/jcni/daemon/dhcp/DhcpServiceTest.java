package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service's connection handling, in this JVM on a socket in a temporary directory (no root,
 * no DHCP): threads stay bounded whatever clients do, idle connections are dropped, and the
 * service answers through it all.
 */
class DhcpServiceTest {
    @TempDir
    Path dir;

    final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();

    DhcpService.Server start(long ioTimeoutMillis) throws Exception {
        FakeServer fake = new FakeServer();
        DhcpLeases leases = new DhcpLeases(new LeaseStore(dir.resolve("state")), new PrintStream(logBytes, true), new DhcpLeases.Opener() {
            @Override
            public DhcpLeases.Opened open(String netns, String ifname) {
                return new DhcpLeases.Opened(fake, new byte[] {2, 0, 0, 0, 0, 1});
            }

            @Override
            public void down(String netns, String ifname) {
            }
        }, fake::clock);
        DhcpService.Server s = new DhcpService.Server(dir.resolve("dhcp.sock"), dir.resolve("state"), leases, new PrintStream(logBytes, true));
        s.ioTimeoutMillis = ioTimeoutMillis;
        s.bind();
        return s;
    }

    Map<String, Object> call(String line) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(dir.resolve("dhcp.sock")));
            ch.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
            ByteArrayOutputStream in = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (ch.read(buf.clear()) > 0) in.write(buf.array(), 0, buf.position());
            return Json.parseObject(in.toString(StandardCharsets.UTF_8).trim());
        }
    }

    static long threads() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/task"))) {
            return s.count();
        }
    }

    @Test
    void twoThousandIdleConnectionsTakeNoThreadsAndTheServiceStillAnswers() throws Exception {
        try (DhcpService.Server s = start(60_000)) {
            assertEquals(true, call("{\"op\":\"status\"}").get("ok"));
            long before = threads();
            List<SocketChannel> idle = new ArrayList<>();
            try {
                for (int i = 0; i < 2000; i++) {
                    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                    ch.connect(UnixDomainSocketAddress.of(dir.resolve("dhcp.sock")));
                    idle.add(ch);
                }
                Map<String, Object> st = call("{\"op\":\"status\"}");
                assertEquals(true, st.get("ok"), st.toString());
                assertEquals(0L, st.get("leases"));
                // A request for a worker, while 2,000 connections (at most MAX_READING of them kept) say nothing.
                Map<String, Object> add = call("{\"op\":\"add\",\"containerId\":\"c1\",\"network\":\"n\",\"ifname\":\"eth0\",\"netns\":\"/x\"}");
                assertEquals(true, add.get("ok"), add.toString());
                assertTrue(threads() <= before + 4, "threads " + before + " -> " + threads());
                assertNull(s.stalled());
                assertTrue(s.status().contains(" health=ok "), s.status());
                java.util.regex.Matcher m = java.util.regex.Pattern.compile(" dropped_idle=(\\d+) ").matcher(s.status());
                assertTrue(m.find() && Long.parseLong(m.group(1)) >= 2000 - DhcpService.MAX_READING,
                        "at most MAX_READING silent connections kept: " + s.status());
            } finally {
                for (SocketChannel ch : idle) ch.close();
            }
        }
    }

    @Test
    void aConnectionThatSendsNothingIsDroppedAtItsDeadline() throws Exception {
        try (DhcpService.Server s = start(300);
             SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(dir.resolve("dhcp.sock")));
            long t0 = System.nanoTime();
            int n = ch.read(ByteBuffer.allocate(16)); // blocks until the service closes it
            assertEquals(-1, n);
            assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "dropped, not held");
            assertTrue(s.status().contains(" dropped_idle=1 "), s.status());
        }
    }

    @Test
    void workersAllStuckShowAsStalledAndStatusIsStillAnswered() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        FakeServer fake = new FakeServer();
        DhcpLeases leases = new DhcpLeases(new LeaseStore(dir.resolve("state")), new PrintStream(logBytes, true), new DhcpLeases.Opener() {
            @Override
            public DhcpLeases.Opened open(String netns, String ifname) {
                try {
                    release.await(); // an exchange that hangs
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new io.jcni.linux.ErrnoException(2, "open " + netns);
            }

            @Override
            public void down(String netns, String ifname) {
            }
        }, fake::clock);
        List<SocketChannel> adds = new ArrayList<>();
        try (DhcpService.Server s = new DhcpService.Server(dir.resolve("dhcp.sock"), dir.resolve("state"), leases, new PrintStream(logBytes, true))) {
            s.waitStallMillis = 200;
            s.bind();
            for (int i = 0; i < DhcpService.WORKERS + 1; i++) {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                ch.connect(UnixDomainSocketAddress.of(dir.resolve("dhcp.sock")));
                ch.write(ByteBuffer.wrap(("{\"op\":\"add\",\"containerId\":\"c" + i
                        + "\",\"network\":\"n\",\"ifname\":\"eth0\",\"netns\":\"/x\"}\n").getBytes(StandardCharsets.UTF_8)));
                adds.add(ch);
            }
            for (int i = 0; i < 100 && s.stalled() == null; i++) Thread.sleep(50);
            assertTrue(String.valueOf(s.stalled()).startsWith("1 requests waiting, the oldest for "), String.valueOf(s.stalled()));
            assertTrue(s.status().contains(" health=stalled reason=\"1 requests waiting"), s.status());
            assertEquals(true, call("{\"op\":\"status\"}").get("ok"), "status is answered by the accept loop");
            release.countDown();
            for (int i = 0; i < 100 && s.stalled() != null; i++) Thread.sleep(50);
            assertNull(s.stalled(), "serving again");
        } finally {
            release.countDown();
            for (SocketChannel ch : adds) ch.close();
        }
    }

    @Test
    void aBrokenRequestGetsAnErrorAndTheServiceGoesOn() throws Exception {
        try (DhcpService.Server s = start(60_000)) {
            assertEquals(false, call("not json").get("ok"));
            assertEquals(false, call("{\"op\":\"add\"}").get("ok"));
            assertEquals(true, call("{\"op\":\"status\"}").get("ok"));
            assertNull(s.stalled());
        }
    }
}
