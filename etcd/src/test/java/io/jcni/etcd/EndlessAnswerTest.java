package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.*;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An endpoint whose answer never ends (a broken or hostile etcd, a looping proxy): the call fails
 * with its own message after {@link EtcdClient#MAX_ANSWER} bytes instead of filling the heap of
 * the jcnid that hosts the caller (which exits on OutOfMemoryError, taking every service with it).
 */
class EndlessAnswerTest {
    @Test
    void anEndlessAnswerFailsTheCallAndFillsNoHeap() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            exchange.sendResponseHeaders(200, 0); // chunked, no length: the body ends when the server says so
            byte[] chunk = new byte[64 << 10];
            java.util.Arrays.fill(chunk, (byte) ' ');
            try (OutputStream out = exchange.getResponseBody()) {
                for (long sent = 0; sent < 4L * EtcdClient.MAX_ANSWER; sent += chunk.length) out.write(chunk);
            } catch (IOException clientGone) {
                // the client stopped reading: what it should do
            }
        });
        server.start();
        try {
            EtcdClient etcd = new EtcdClient(List.of("http://127.0.0.1:" + server.getAddress().getPort()), Duration.ofSeconds(10));
            IOException e = assertThrows(IOException.class, () -> etcd.get("/k"));
            assertTrue(String.valueOf(e.getMessage()).contains("answer over " + EtcdClient.MAX_ANSWER + " bytes"), e.toString());
        } finally {
            server.stop(0);
        }
    }
}
