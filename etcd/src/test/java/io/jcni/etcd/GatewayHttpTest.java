package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The unary transport against a fake etcd on a loopback ServerSocket: parsing, keep-alive, the pool, stale connections. */
class GatewayHttpTest {
    private static final URI X = URI.create("http://x:1");
    private static final byte[] JSON = "{\"key\":\"L2E=\"}".getBytes(StandardCharsets.UTF_8);

    // ------------------------------------------------------------------ parsing, no sockets

    private static AnswerReader reader(String wire) {
        AnswerReader r = new AnswerReader(new ByteArrayInputStream(wire.getBytes(StandardCharsets.ISO_8859_1)), null);
        r.startAnswer();
        return r;
    }

    @Test
    void answerByContentLength() throws IOException {
        AnswerReader r = reader("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        GatewayHttp.Answer a = r.readAnswer(1000, X, "/p");
        assertEquals(200, a.statusCode());
        assertEquals("{}", a.body());
        assertTrue(r.reusable());
    }

    @Test
    void chunkedAnswerWithExtensionsAndTrailersAfterAContinue() throws IOException {
        AnswerReader r = reader("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n"
                + "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n");
        GatewayHttp.Answer a = r.readAnswer(1000, X, "/p");
        assertEquals(200, a.statusCode());
        assertEquals("hello world", a.body());
        assertTrue(r.reusable());
    }

    @Test
    void goRefusalOfPlainHttpIsReadToTheEndAndEndsTheConnection() throws IOException {
        // what Go's TLS listener writes to a plain-http request, then it closes
        AnswerReader r = reader("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");
        GatewayHttp.Answer a = r.readAnswer(1000, X, "/p");
        assertEquals(400, a.statusCode());
        assertEquals("Client sent an HTTP request to an HTTPS server.\n", a.body());
        assertFalse(r.reusable());
    }

    @Test
    void connectionCloseEndsTheConnection() throws IOException {
        AnswerReader r = reader("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}");
        r.readAnswer(1000, X, "/p");
        assertFalse(r.reusable());
    }

    @Test
    void anAnswerOverTheLimitFailsBeforeItIsRead() {
        AnswerReader r = reader("HTTP/1.1 200 OK\r\nContent-Length: " + (EtcdClient.MAX_ANSWER + 1) + "\r\n\r\n{}");
        EtcdException e = assertThrows(EtcdException.class, () -> r.readAnswer(1000, X, "/v3/kv/range"));
        assertEquals("etcd http://x:1/v3/kv/range: answer over " + EtcdClient.MAX_ANSWER + " bytes", e.getMessage());
    }

    @Test
    void aChunkedAnswerOverTheLimitFails() {
        String hugeChunk = Integer.toHexString(EtcdClient.MAX_ANSWER) + "\r\n";
        AnswerReader r = reader("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n" + hugeChunk);
        assertThrows(EtcdException.class, () -> r.readAnswer(1000, X, "/p"));
    }

    @Test
    void malformedAnswersAreIoErrors() {
        assertThrows(IOException.class, () -> reader("SSH-2.0-OpenSSH\r\n\r\n").readAnswer(1000, X, "/p"));
        assertThrows(IOException.class, () -> reader("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").readAnswer(1000, X, "/p"));
        assertThrows(IOException.class, () -> reader("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").readAnswer(1000, X, "/p"));
        IOException eof = assertThrows(IOException.class, () -> reader("").readAnswer(1000, X, "/p"));
        assertTrue(eof.getMessage().contains("EOF"), eof.getMessage()); // EtcdClient.explain's cue for the TLS probes
        assertThrows(IOException.class, () -> reader("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}").readAnswer(1000, X, "/p"));
    }

    @Test
    void theRequestIsOneBufferWithItsLength() {
        String r = new String(GatewayHttp.request(URI.create("http://10.0.0.1:2379"), "/v3/kv/txn", JSON, "tok.1"), StandardCharsets.UTF_8);
        assertEquals("POST /v3/kv/txn HTTP/1.1\r\nHost: 10.0.0.1:2379\r\nContent-Type: application/json\r\nContent-Length: " + JSON.length
                + "\r\nAuthorization: tok.1\r\n\r\n{\"key\":\"L2E=\"}", r);
        assertThrows(IllegalArgumentException.class, () -> GatewayHttp.request(URI.create("http://h:1"), "/p", JSON, "a\r\nX: y"));
    }

    @Test
    void chachaSuitesGoFirstTheRestKeepTheirOrder() {
        String[] jdk = {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"};
        assertEquals(List.of("TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_AES_256_GCM_SHA384",
                "TLS_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"), List.of(GatewayHttp.chachaFirst(jdk)));
    }

    // ------------------------------------------------------------------ against a fake etcd

    /** How the fake ends its connections: etcd closing them (a restart), or a reset. */
    enum After { CLOSE, RESET }

    /**
     * A fake etcd: a thread per connection reads requests (head and Content-Length body) and
     * answers each with {@code {"n":"<request number>"}}; counts connections and requests.
     */
    static final class FakeEtcd implements AutoCloseable {
        final ServerSocket server;
        final AtomicInteger connections = new AtomicInteger(), requests = new AtomicInteger();
        final List<Socket> sockets = new CopyOnWriteArrayList<>();
        volatile After after = After.CLOSE;
        volatile boolean answer = true;
        /** Counted down as each request has been read. */
        volatile CountDownLatch received = new CountDownLatch(0);
        /** Answers wait for this. */
        volatile CountDownLatch release = new CountDownLatch(0);

        FakeEtcd() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(this::acceptLoop);
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getLocalPort());
        }

        private void acceptLoop() {
            try {
                while (true) {
                    Socket s = server.accept();
                    sockets.add(s);
                    connections.incrementAndGet();
                    Thread.ofVirtual().start(() -> serve(s));
                }
            } catch (IOException closed) {
                // the test is over
            }
        }

        private void serve(Socket s) {
            try (s) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                while (true) {
                    int length = readHead(in);
                    if (length < 0) return;
                    in.readNBytes(length);
                    int n = requests.incrementAndGet();
                    received.countDown();
                    if (!release.await(30, TimeUnit.SECONDS) || !answer) {
                        in.read(); // hold the connection open and silent until the client goes
                        return;
                    }
                    byte[] body = ("{\"n\":\"" + n + "\"}").getBytes(StandardCharsets.UTF_8);
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.ISO_8859_1));
                    out.write(body);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the client went away
            }
        }

        /** Ends every open connection as {@link #after} says, as etcd does when it restarts. */
        void endConnections() throws IOException {
            for (Socket s : sockets) {
                if (after == After.RESET) s.setSoLinger(true, 0);
                s.close();
            }
        }

        /** The Content-Length of the next request, -1 at the end of the stream. */
        private static int readHead(InputStream in) throws IOException {
            StringBuilder head = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                head.append((char) c);
                if (head.toString().endsWith("\r\n\r\n")) break;
            }
            if (c < 0) return -1;
            for (String line : head.toString().split("\r\n")) {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) return Integer.parseInt(line.substring(15).trim());
            }
            return 0;
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket s : sockets) s.close();
        }
    }

    @Test
    void keepAliveCarriesManyCallsOnOneConnection() throws Exception {
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(10))) {
            for (int i = 1; i <= 3; i++) {
                GatewayHttp.Answer a = http.post(etcd.uri(), "/v3/kv/range", JSON, null, true);
                assertEquals("{\"n\":\"" + i + "\"}", a.body());
            }
            assertEquals(1, etcd.connections.get());
            assertEquals(1, http.idleCount());
        }
    }

    @Test
    void thePoolKeepsAtMostItsBoundOfIdleConnections() throws Exception {
        int calls = GatewayHttp.MAX_IDLE_PER_ENDPOINT + 2;
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(30))) {
            etcd.received = new CountDownLatch(calls);
            etcd.release = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            AtomicInteger ok = new AtomicInteger();
            for (int i = 0; i < calls; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    try {
                        http.post(etcd.uri(), "/v3/kv/range", JSON, null, true);
                        ok.incrementAndGet();
                    } catch (IOException e) {
                        // counted by ok
                    }
                }));
            }
            assertTrue(etcd.received.await(30, TimeUnit.SECONDS), "every call in flight at once");
            etcd.release.countDown();
            for (Thread t : threads) t.join(30_000);
            assertEquals(calls, ok.get());
            assertEquals(calls, etcd.connections.get());
            assertEquals(GatewayHttp.MAX_IDLE_PER_ENDPOINT, http.idleCount());
        }
    }

    @Test
    void aPooledConnectionEtcdClosedIsReplacedForAnIdempotentCall() throws Exception {
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(10))) {
            http.post(etcd.uri(), "/v3/kv/range", JSON, null, true);
            etcd.after = After.CLOSE;
            etcd.endConnections();
            Thread.sleep(50); // the FIN crosses loopback
            GatewayHttp.Answer a = http.post(etcd.uri(), "/v3/kv/range", JSON, null, true);
            assertEquals(2, etcd.connections.get(), "sent again on a new connection");
            assertTrue(a.body().contains("\"n\""), a.body());
        }
    }

    @Test
    void aChangeOnAPooledConnectionEtcdClosedFailsAsItCame() throws Exception {
        // The request was written; whether etcd ran it before closing cannot be known: not sent twice.
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(10))) {
            http.post(etcd.uri(), "/v3/kv/txn", JSON, null, false);
            etcd.after = After.CLOSE;
            etcd.endConnections();
            Thread.sleep(50);
            assertThrows(IOException.class, () -> http.post(etcd.uri(), "/v3/kv/txn", JSON, null, false));
            assertEquals(1, etcd.connections.get(), "not sent again");
            assertEquals(1, etcd.requests.get());
            assertEquals("{\"n\":\"2\"}", http.post(etcd.uri(), "/v3/kv/txn", JSON, null, false).body(), "the next call connects anew");
        }
    }

    @Test
    void aChangeWhoseWriteFailsOnAPooledConnectionIsSentOnANewOne() throws Exception {
        // A reset connection refuses the write: the request provably never reached etcd.
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(10))) {
            http.post(etcd.uri(), "/v3/kv/txn", JSON, null, false);
            etcd.after = After.RESET;
            etcd.endConnections();
            Thread.sleep(50); // the RST crosses loopback
            GatewayHttp.Answer a = http.post(etcd.uri(), "/v3/kv/txn", JSON, null, false);
            assertEquals("{\"n\":\"2\"}", a.body(), "etcd saw the change once");
            assertEquals(2, etcd.connections.get());
        }
    }

    @Test
    void aSilentEtcdTimesOutWithASocketTimeout() throws Exception {
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofMillis(300))) {
            etcd.answer = false;
            IOException e = assertThrows(IOException.class, () -> http.post(etcd.uri(), "/v3/kv/range", JSON, null, true));
            assertInstanceOf(SocketTimeoutException.class, e, "cluster-ipam's Clients repeats a timed-out call once on this cue");
            assertEquals(1, etcd.connections.get(), "a timeout is no stale connection");
        }
    }

    /**
     * A one-connection server that reads one request and answers with {@code head}, then the
     * pieces of {@code body} with {@code pauseMs} between them; ends when the client goes.
     */
    private static ServerSocket slowAnswer(String head, List<String> body, long pauseMs) throws IOException {
        ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            try (Socket s = server.accept()) {
                InputStream in = s.getInputStream();
                in.readNBytes(FakeEtcd.readHead(in));
                OutputStream out = s.getOutputStream();
                out.write(head.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                for (String piece : body) {
                    Thread.sleep(pauseMs);
                    out.write(piece.getBytes(StandardCharsets.ISO_8859_1));
                    out.flush();
                }
                in.read(); // until the client closes
            } catch (IOException | InterruptedException clientGone) {
                // the client gave up: what a trickled answer should make it do
            }
        });
        return server;
    }

    private static List<String> bytesOf(String s) {
        List<String> out = new ArrayList<>();
        for (char c : s.toCharArray()) out.add(String.valueOf(c));
        return out;
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aBodyTrickledByteByBytePastTheDeadlineFailsAsATimeout() throws Exception {
        // Each byte comes well within the 500 ms timeout; the whole body would take 20 s.
        String body = "{\"kvs\":[" + "\"x\",".repeat(40) + "\"x\"]}";
        try (ServerSocket server = slowAnswer("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n", bytesOf(body), 100);
                GatewayHttp http = new GatewayHttp(null, Duration.ofMillis(500))) {
            URI ep = URI.create("http://127.0.0.1:" + server.getLocalPort());
            IOException e = assertThrows(IOException.class, () -> http.post(ep, "/v3/kv/range", JSON, null, true));
            assertInstanceOf(SocketTimeoutException.class, e, "cluster-ipam's Clients repeats a timed-out call once on this cue");
            assertTrue(e.getMessage().contains("answer not whole within the timeout"), e.getMessage());
            assertEquals(0, http.idleCount(), "the connection is not kept");
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aChunkedBodyTrickledPastTheDeadlineFailsAsATimeout() throws Exception {
        List<String> chunks = new ArrayList<>();
        for (int i = 0; i < 200; i++) chunks.add("1\r\nx\r\n");
        chunks.add("0\r\n\r\n");
        try (ServerSocket server = slowAnswer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunks, 100);
                GatewayHttp http = new GatewayHttp(null, Duration.ofMillis(500))) {
            URI ep = URI.create("http://127.0.0.1:" + server.getLocalPort());
            IOException e = assertThrows(IOException.class, () -> http.post(ep, "/v3/kv/range", JSON, null, true));
            assertInstanceOf(SocketTimeoutException.class, e);
            assertTrue(e.getMessage().contains("answer not whole within the timeout"), e.getMessage());
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aBodyInSeveralPiecesWithinTheDeadlineIsReadWhole() throws Exception {
        String body = "{\"kvs\":[\"a\",\"b\",\"c\"]}";
        List<String> pieces = List.of(body.substring(0, 8), body.substring(8, 16), body.substring(16));
        try (ServerSocket server = slowAnswer("HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n", pieces, 50);
                GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(10))) {
            URI ep = URI.create("http://127.0.0.1:" + server.getLocalPort());
            GatewayHttp.Answer a = http.post(ep, "/v3/kv/range", JSON, null, true);
            assertEquals(200, a.statusCode());
            assertEquals(body, a.body());
        }
    }

    @Test
    void abortFailsTheCallInFlightAndLaterCalls() throws Exception {
        try (FakeEtcd etcd = new FakeEtcd(); GatewayHttp http = new GatewayHttp(null, Duration.ofSeconds(60))) {
            etcd.received = new CountDownLatch(1);
            etcd.answer = false;
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread call = Thread.ofVirtual().start(() -> {
                try {
                    http.post(etcd.uri(), "/v3/kv/range", JSON, null, true);
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            assertTrue(etcd.received.await(30, TimeUnit.SECONDS));
            http.abort();
            call.join(30_000);
            assertFalse(call.isAlive(), "the call in flight ended");
            assertInstanceOf(IOException.class, failure.get());
            IOException later = assertThrows(IOException.class, () -> http.post(etcd.uri(), "/v3/kv/range", JSON, null, true));
            assertEquals("etcd client closed", later.getMessage());
        }
    }
}
