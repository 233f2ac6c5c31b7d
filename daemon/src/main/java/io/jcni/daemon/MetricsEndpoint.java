package io.jcni.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/** {@code --metrics-port}: /metrics and /healthz over HTTP on 127.0.0.1 only. */
final class MetricsEndpoint implements AutoCloseable {
    private final HttpServer http;

    private MetricsEndpoint(HttpServer http) {
        this.http = http;
    }

    static MetricsEndpoint start(int port, Supplier<String> metrics, Supplier<String> health) throws IOException {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 16);
        http.createContext("/metrics", ex -> reply(ex, "text/plain; version=0.0.4; charset=utf-8", metrics.get()));
        http.createContext("/healthz", ex -> reply(ex, "text/plain; charset=utf-8", health.get()));
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        http.start();
        return new MetricsEndpoint(http);
    }

    int port() {
        return http.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }

    @Override
    public void close() {
        http.stop(0);
    }
}
