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
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
