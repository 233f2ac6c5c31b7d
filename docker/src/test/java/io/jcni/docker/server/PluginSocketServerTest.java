package io.jcni.docker.server;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.docker.api.RemoteApi;
import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.network.FakeAttacher;
import io.jcni.docker.store.MemoryStore;
import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The socket as dockerd 20.10 sees it: its exact request bytes (blank Host, no Content-Type). */
@Timeout(60)
class PluginSocketServerTest {
    @TempDir
    Path tmp;
    PluginSocketServer server;
    Path sock;

    @BeforeEach
    void start() throws Exception {
        sock = tmp.resolve("plugins/jtest.sock");
        MemoryStore store = new MemoryStore();
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        server = PluginSocketServer.start(sock, api);
    }

    @AfterEach
    void stop() {
        if (server != null) server.close();
    }

    static String exchange(Path sock, String request) throws Exception {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
            ch.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.UTF_8)));
            ch.shutdownOutput();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(8192);
            while (ch.read(b) >= 0) {
                out.write(b.array(), 0, b.position());
                b.clear();
            }
            return out.toString(StandardCharsets.UTF_8);
        }
    }

    static String post(String path, String body) {
        return "POST " + path + " HTTP/1.1\r\nHost: \r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length
                + "\r\nAccept: application/vnd.docker.plugins.v1.2+json\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n" + body;
    }

    @Test
    void answersDockerdsRequestsWithItsBlankHostHeader() throws Exception {
        String r = exchange(sock, post("/Plugin.Activate", ""));
        assertTrue(r.startsWith("HTTP/1.1 200"), r);
        assertTrue(r.contains("{\"Implements\":[\"NetworkDriver\",\"IpamDriver\"]}"), r);
        r = exchange(sock, post("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.0.0.0/24\",\"SubPool\":\"\",\"Options\":{},\"V6\":false}"));
        assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("\"Pool\":\"10.0.0.0/24\""), r);
        r = exchange(sock, post("/NetworkDriver.Join", ""));
        assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("empty request body"), r);
        r = exchange(sock, post("/NetworkDriver.Whatever", "{}"));
        assertTrue(r.startsWith("HTTP/1.1 404"), r);
    }

    @Test
    void keepsTheConnectionForSeveralCalls() throws Exception {
        String one = post("/NetworkDriver.GetCapabilities", "").replace("Connection: close\r\n", "");
        String r = exchange(sock, one + one);
        assertEquals(2, r.split("HTTP/1.1 200", -1).length - 1, r);
    }

    @Test
    void oversizeBodiesAreRefused() throws Exception {
        String r = exchange(sock, "POST /IpamDriver.RequestPool HTTP/1.1\r\nHost: \r\nContent-Length: " + (PluginSocketServer.MAX_BODY + 1) + "\r\n\r\n{");
        assertTrue(r.startsWith("HTTP/1.1 413"), r);
    }

    @Test
    void socketIsRootOnlyAndStagingIsGone() throws Exception {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(sock)));
        try (var s = Files.list(sock.getParent())) {
            assertEquals(List.of(sock), s.toList(), "the 0700 staging directory is gone once the socket is in place");
        }
        server.close();
        assertFalse(Files.exists(sock));
        try (var s = Files.list(sock.getParent())) {
            assertEquals(0, s.count());
        }
        server = null;
    }

    /** Opens the socket's path and mode to everyone: only SO_PEERCRED is left to refuse others. */
    static void openToEveryone(Path tmp, Path sock) throws Exception {
        for (Path d = sock.getParent(); d.startsWith(tmp.getParent()) && !d.equals(tmp.getParent()); d = d.getParent()) {
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Files.setPosixFilePermissions(sock, PosixFilePermissions.fromString("rw-rw-rw-"));
    }

    @Test
    @Tag("root")
    void aUserOtherThanRootIsRefusedEvenWhenTheSocketIsOpenToAll() throws Exception {
        server.close();
        ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        MemoryStore store = new MemoryStore();
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        server = PluginSocketServer.start(sock, api, new PrintStream(logBytes, true, StandardCharsets.UTF_8), PluginSocketServer.READ_DEADLINE_MILLIS);
        openToEveryone(tmp, sock);
        List<String> curl = List.of("curl", "-sS", "-m", "20", "--unix-socket", sock.toString(), "-X", "POST", "-d",
                "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.0.0.0/24\"}", "http://x/IpamDriver.RequestPool");
        List<String> asNobody = new java.util.ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
        asNobody.addAll(curl);
        for (int i = 0; i < 3; i++) {
            Process p = new ProcessBuilder(asNobody).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertNotEquals(0, p.exitValue(), out);
            assertFalse(out.contains("PoolID"), out);
        }
        assertEquals(java.util.Map.of(), store.list("pools"), "nobody created no pool");
        Process p = new ProcessBuilder(curl).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertTrue(out.contains("\"Pool\":\"10.0.0.0/24\""), "root is served, the acceptor went on: " + out);
        String log = logBytes.toString(StandardCharsets.UTF_8);
        assertEquals(3, log.lines().filter(l -> l.contains("jcnid docker rejected_peer=\"nobody\"")).count(), log);
    }

    /** A client that sends a request's start, then one byte now and then. */
    static final class Trickler implements AutoCloseable {
        final SocketChannel ch;
        final CompletableFuture<Integer> closedByServer;

        Trickler(Path sock, String start) throws Exception {
            ch = SocketChannel.open(UnixDomainSocketAddress.of(sock));
            ch.write(ByteBuffer.wrap(start.getBytes(StandardCharsets.UTF_8)));
            closedByServer = CompletableFuture.supplyAsync(() -> {
                try {
                    ByteBuffer b = ByteBuffer.allocate(4096);
                    int n;
                    while ((n = ch.read(b)) > 0) b.clear();
                    return n;
                } catch (java.io.IOException e) {
                    return -2; // reset: the server closed it with the client's bytes unread
                }
            }, Executors.newVirtualThreadPerTaskExecutor());
        }

        void trickle() {
            try {
                ch.write(ByteBuffer.wrap(new byte[] {' '}));
            } catch (Exception ignored) {
                // the server dropped it
            }
        }

        @Override
        public void close() throws Exception {
            ch.close();
        }
    }

    static List<Trickler> tricklers(Path sock, int n) throws Exception {
        List<Trickler> t = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            // half trickle a body they announced, half their headers
            t.add(new Trickler(sock, i % 2 == 0
                    ? "POST /IpamDriver.RequestPool HTTP/1.1\r\nHost: \r\nContent-Length: 1000\r\n\r\n{"
                    : "POST /IpamDriver.RequestPool HTTP/1.1\r\nHost: \r\nX-Slow: "));
        }
        return t;
    }

    /** More trickling clients than Jetty has threads: none is held by them, so a normal call is answered while they all hang on. */
    @Test
    void tricklingClientsHoldNoThread() throws Exception {
        server.close();
        MemoryStore store = new MemoryStore();
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        server = PluginSocketServer.start(sock, api, null, 600_000); // the deadline plays no part here
        List<Trickler> slow = tricklers(sock, 48);
        try {
            for (int round = 0; round < 3; round++) {
                slow.forEach(Trickler::trickle);
                CompletableFuture<String> normal = CompletableFuture.supplyAsync(() -> {
                    try {
                        return exchange(sock, post("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.0.0.0/24\"}"));
                    } catch (Exception e) {
                        return e.toString();
                    }
                });
                String r = normal.get(60, TimeUnit.SECONDS);
                assertTrue(r.startsWith("HTTP/1.1 200") && r.contains("PoolID"), r);
            }
            for (Trickler t : slow) assertFalse(t.closedByServer.isDone(), "the slow clients were all still connected meanwhile");
        } finally {
            for (Trickler t : slow) t.close();
        }
    }

    @Test
    void requestsThatDoNotArriveWithinTheDeadlineAreDropped() throws Exception {
        server.close();
        MemoryStore store = new MemoryStore();
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        server = PluginSocketServer.start(sock, api, null, 1_000);
        List<Trickler> slow = tricklers(sock, 8);
        try {
            // they keep trickling, so an idle timeout alone would never drop them
            for (int i = 0; i < 120 && !slow.stream().allMatch(t -> t.closedByServer.isDone()); i++) {
                slow.forEach(Trickler::trickle);
                Thread.sleep(250);
            }
            for (Trickler t : slow) assertTrue(t.closedByServer.get(1, TimeUnit.SECONDS) < 0, "closed by the server");
            String r = exchange(sock, post("/NetworkDriver.GetCapabilities", ""));
            assertTrue(r.startsWith("HTTP/1.1 200"), r);
            String two = post("/NetworkDriver.GetCapabilities", "").replace("Connection: close\r\n", "");
            try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
                // a keep-alive connection whose calls each arrive at once is never dropped between them
                for (int i = 0; i < 3; i++) {
                    ch.write(ByteBuffer.wrap(two.getBytes(StandardCharsets.UTF_8)));
                    ByteBuffer b = ByteBuffer.allocate(8192);
                    String got = "";
                    while (!got.contains("\"ConnectivityScope\"")) {
                        assertTrue(ch.read(b) > 0, got);
                        got = new String(b.array(), 0, b.position(), StandardCharsets.UTF_8);
                    }
                    assertTrue(got.startsWith("HTTP/1.1 200"), got);
                    Thread.sleep(1_500); // longer than the deadline, between calls
                }
            }
        } finally {
            for (Trickler t : slow) t.close();
        }
    }

    @Test
    void aBodyLargerThanAnnouncedIsCutAtTheCap() throws Exception {
        // chunked: no length announced, the cap applies as the bytes arrive
        StringBuilder req = new StringBuilder("POST /IpamDriver.RequestPool HTTP/1.1\r\nHost: \r\nTransfer-Encoding: chunked\r\n\r\n");
        String chunk = "x".repeat(64 * 1024);
        for (int i = 0; i < 20; i++) req.append(Integer.toHexString(chunk.length())).append("\r\n").append(chunk).append("\r\n");
        req.append("0\r\n\r\n");
        String r = exchange(sock, req.toString());
        assertTrue(r.startsWith("HTTP/1.1 413"), r.substring(0, Math.min(200, r.length())));
    }

    @Test
    void staleSocketIsReplacedLiveOneRefused() throws Exception {
        MemoryStore store = new MemoryStore();
        RemoteApi api = new RemoteApi(new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null), new JcniIpam(store), null);
        Exception e = assertThrows(java.io.IOException.class, () -> PluginSocketServer.start(sock, api));
        assertTrue(e.getMessage().contains("another driver"), e.getMessage());
        Path stale = tmp.resolve("plugins/stale.sock");
        Files.createDirectories(tmp.resolve("plugins/.stale.sock.123")); // left by a driver killed while starting
        try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(stale)); // bound, then closed: the file stays, nobody listens
        }
        try (PluginSocketServer again = PluginSocketServer.start(stale, api)) {
            assertTrue(exchange(stale, post("/Plugin.Activate", "")).startsWith("HTTP/1.1 200"));
            assertFalse(Files.exists(tmp.resolve("plugins/.stale.sock.123")));
        }
    }
}
