package io.jcni.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/** {@code --metrics-port}: /metrics and /healthz over HTTP on 127.0.0.1 only. */
final class MetricsEndpoint implements AutoCloseable {
    private final HttpServer http;

    private MetricsEndpoint(HttpServer http) {
        this.http = http;
    }

    /**
     * The JDK server's limits (system properties, read once when its first server starts; values
     * set on the command line win): a request must arrive, and its answer be taken, within 10 s, as
     * on the plugin socket; a connection that sends nothing is closed after at most 10 s and one
     * more check (also 10 s); no more than 32 connections at once. Without them an idle or slow
     * client holds its connection for ever.
     */
    static final Map<String, String> LIMITS = Map.of("sun.net.httpserver.maxReqTime", "10", "sun.net.httpserver.maxRspTime", "10",
            "jdk.httpserver.maxConnections", "32");

    static MetricsEndpoint start(int port, Supplier<String> metrics, Supplier<String> health) throws IOException {
        LIMITS.forEach((k, v) -> {
            if (System.getProperty(k) == null) System.setProperty(k, v);
        });
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
