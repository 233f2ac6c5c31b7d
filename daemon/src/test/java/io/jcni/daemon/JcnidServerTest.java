package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.plugins.skel.Skel;
import io.jcni.types.Cidr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JcnidServerTest {

    @TempDir
    Path tmp;

    static List<Cases.Case> cases() {
        return Cases.all();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void daemonAnswersExactlyWhatTheSkeletonPrints(Cases.Case c) throws Exception {
        Skel.Outcome direct = Skel.run(PluginRegistry.lookup("static"), c.env(), c.stdin().getBytes(StandardCharsets.UTF_8),
                PluginRegistry.context(new PrintStream(new ByteArrayOutputStream())));
        try (TestDaemon d = new TestDaemon(tmp)) {
            JcnidClient.Reply r = d.exec("static", c.env(), c.stdin());
            assertEquals(Protocol.STATUS_ACCEPTED, r.status());
            assertEquals(direct.stdout(), r.result().stdoutText());
            assertEquals(direct.exitCode(), r.result().exitCode());
        }
    }

    @Test
    void socketIsPrivateAndPidFileWritten() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d.socket())));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d.socket().getParent())));
            assertEquals(Long.toString(ProcessHandle.current().pid()), Files.readString(d.cfg.pidFile()).trim());
        }
    }

    @Test
    void logsOneLinePerRequest() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp)) {
            d.exec("static", TestDaemon.env("ADD", "ctr-log"), TestDaemon.STATIC_CONF);
            String line = d.log().lines().filter(l -> l.contains("plugin=static")).findFirst().orElseThrow();
            assertTrue(line.matches("\\S+Z jcnid plugin=static cmd=ADD container=ctr-log ifname=eth0 dur_ms=[0-9.]+ exit=0"), line);
        }
    }

    @Test
    void logsPhasesOnRequestAndAlwaysSumsThemInTheMetrics() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofSeconds(30), 256, PluginRegistry::lookup, true)) {
            d.exec("static", TestDaemon.env("ADD", "ctr-ph"), TestDaemon.STATIC_CONF);
            String line = d.log().lines().filter(l -> l.contains("plugin=static")).findFirst().orElseThrow();
            assertTrue(line.matches("\\S+Z jcnid plugin=static cmd=ADD container=ctr-ph ifname=eth0 dur_ms=[0-9.]+ exit=0"
                    + " phases=([a-z_]+:[0-9]+\\.[0-9]{3},)*[a-z_]+:[0-9]+\\.[0-9]{3}"), line);
            for (String p : List.of("queue:", "parse:", "plugin:")) assertTrue(line.contains(p), p + " in " + line);
            String metrics = d.server.metrics().render();
            assertTrue(metrics.contains("jcnid_request_phase_seconds_total{plugin=\"static\",command=\"ADD\",phase=\"plugin\"} "), metrics);
        }
        try (TestDaemon d = new TestDaemon(tmp.resolve("quiet"))) {
            d.exec("static", TestDaemon.env("ADD", "ctr-ph"), TestDaemon.STATIC_CONF);
            assertFalse(d.log().contains("phases="), d.log());
        }
    }

    /**
     * A plugin's diagnostics, and those of the delegate it calls in-process, reach the caller's
     * stderr, not the daemon's log; the delegate is found in the registry the daemon was given.
     */
    @Test
    void pluginAndDelegateLogsReachTheCallerAndDelegationUsesTheDaemonsRegistry() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path inner = bin.resolve("inner");
        Files.writeString(inner, "#!/bin/sh\n# " + Delegation.MARKER + "\nexit 99\n");
        Files.setPosixFilePermissions(inner, PosixFilePermissions.fromString("rwxr-xr-x"));
        Result innerResult = new Result("1.0.0", List.of(), List.of(new Result.IpConfig(Cidr.parse("10.3.0.2/24"), null, null)), List.of(), null);
        Function<String, Supplier<Plugin>> registry = t -> switch (t) {
            case "outer" -> () -> new Quiet() {
                @Override
                public Result add(PluginRequest req) {
                    req.log().println("outer: a warning");
                    return req.delegator().add("inner", req.stdin(), req.env());
                }
            };
            case "inner" -> () -> new Quiet() {
                @Override
                public Result add(PluginRequest req) {
                    req.log().println("inner: a warning");
                    return innerResult;
                }
            };
            default -> PluginRegistry.lookup(t);
        };
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofSeconds(30), 256, registry)) {
            Map<String, String> env = new HashMap<>(TestDaemon.env("ADD", "c1"));
            env.put("CNI_PATH", bin.toString());
            JcnidClient.Reply r = d.exec("outer", env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"outer\"}");
            assertEquals(0, r.result().exitCode(), r.result().stdoutText());
            assertTrue(r.result().stdoutText().contains("10.3.0.2/24"), r.result().stdoutText());
            assertEquals("outer: a warning\ninner: a warning\n", new String(r.result().stderr(), StandardCharsets.UTF_8));
            assertFalse(d.log().contains("a warning"), d.log());
        }
    }

    private abstract static class Quiet implements Plugin {
        @Override
        public void del(PluginRequest req) {}

        @Override
        public void check(PluginRequest req) {}
    }

    /** Garbage, truncated and oversize frames get an error or a clean close, and the daemon keeps serving. */
    @Test
    void malformedRequestsNeverHurtTheDaemon() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp)) {
            // not our protocol at all: closed without a word
            assertArrayEquals(new byte[0], raw(d, "GET /metrics HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII), true));
            // a header cut short
            assertArrayEquals(new byte[0], raw(d, new byte[] {'J', 'C', 'N'}, true));
            // another protocol version: declined, so a shim falls back
            assertArrayEquals(new byte[] {'F'}, raw(d, header(2, 1, 0), true));
            // oversize
            assertError(raw(d, header(1, 1, Protocol.MAX_BODY + 1), false), "request too large");
            assertError(raw(d, header(1, 1, -1), false), "request too large");
            // body shorter than announced
            assertError(raw(d, concat(header(1, 1, 100), new byte[10]), true), "truncated request");
            // lengths that lie
            ByteBuffer lie = ByteBuffer.allocate(12 + 8).put(header(1, 1, 8)).putInt(0).putInt(1_000_000);
            assertError(raw(d, lie.array(), true), "malformed request");
            // unknown kind
            assertError(raw(d, header(1, 99, 0), true), "unknown request kind");
            // an unknown plugin type is declined (the standalone launcher decides)
            assertTrue(d.exec("no-such-plugin", TestDaemon.env("ADD", "c1"), "{}").declined());

            JcnidClient.Reply ok = d.exec("static", TestDaemon.env("ADD", "c1"), TestDaemon.STATIC_CONF);
            assertEquals(0, ok.result().exitCode());
            String metrics = JcnidClient.metrics(d.socket());
            assertTrue(metrics.contains("jcnid_protocol_errors_total 7\n"), metrics);
            assertTrue(metrics.contains("jcnid_declined_total 2\n"), metrics);
        }
    }

    /** A wedged daemon (it accepts, never answers) makes status and metrics fail, not hang. */
    @Test
    void theClientGivesUpOnADaemonThatDoesNotAnswer() throws Exception {
        Path sock = tmp.resolve("mute.sock");
        try (java.nio.channels.ServerSocketChannel mute = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            mute.bind(UnixDomainSocketAddress.of(sock));
            assertThrows(java.net.SocketTimeoutException.class, () -> JcnidClient.call(sock,
                    Protocol.encodeRequest(Protocol.KIND_HEALTH, null), Duration.ofMillis(200)));
        }
    }

    @Test
    void aClientThatSendsNothingIsDroppedAfterTheIoTimeout() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp); SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(d.socket()))) {
            long t0 = System.nanoTime();
            assertEquals(-1, ch.read(ByteBuffer.allocate(1)));
            long waited = System.nanoTime() - t0;
            assertTrue(waited >= Connections.IO_TIMEOUT.toNanos() - 500_000_000L, "dropped after " + waited / 1e6 + " ms");
            assertEquals(0, d.exec("static", TestDaemon.env("ADD", "c1"), TestDaemon.STATIC_CONF).result().exitCode());
        }
    }

    @Test
    void fiftyParallelRequestsAreAllAnswered() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp); ExecutorService pool = Executors.newFixedThreadPool(50)) {
            List<Future<JcnidClient.Reply>> fs = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                String ip = "10.7." + i + ".5/24";
                Map<String, String> env = Cases.with(TestDaemon.env("ADD", "ctr" + i), "CNI_ARGS", "IP=" + ip);
                fs.add(pool.submit(() -> d.exec("static", env, TestDaemon.STATIC_CONF)));
            }
            for (int i = 0; i < 50; i++) {
                JcnidClient.Reply r = fs.get(i).get();
                assertEquals(0, r.result().exitCode(), r.result().stdoutText());
                assertTrue(r.result().stdoutText().contains("\"10.7." + i + ".5/24\""), r.result().stdoutText());
            }
            assertTrue(JcnidClient.metrics(d.socket()).contains("jcnid_requests_total{plugin=\"static\",command=\"ADD\"} 50\n"));
        }
    }

    @Test
    void sameAttachmentIsSerializedOthersRunInParallel() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp); ExecutorService pool = Executors.newFixedThreadPool(12)) {
            d.slowMillis = 150;
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"slow\"}";
            List<Future<JcnidClient.Reply>> fs = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < 12; i++) {
                String ctr = "ctr" + (i % 4); // 4 attachments, 3 requests each
                fs.add(pool.submit(() -> d.exec("slow", TestDaemon.env("ADD", ctr), conf)));
            }
            for (Future<JcnidClient.Reply> f : fs) assertEquals(0, f.get().result().exitCode());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            for (int i = 0; i < 4; i++) assertEquals(1, d.perContainerMax.get("ctr" + i), "ctr" + i + " ran concurrently");
            assertTrue(d.slowMaxRunning.get() > 1, "different attachments never overlapped");
            assertTrue(ms >= 3 * 150, "3 serialized requests took only " + ms + " ms");
        }
    }

    @Test
    void aRequestOverTheTimeoutIsAnsweredTryAgainLater() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofMillis(300), 256, PluginRegistry::lookup)) {
            JcnidClient.Reply r = d.exec("gate", TestDaemon.env("ADD", "c1"), "{\"cniVersion\":\"0.4.0\",\"name\":\"n\",\"type\":\"gate\"}");
            assertEquals(1, r.result().exitCode());
            Map<String, Object> err = Json.parseObject(r.result().stdoutText());
            assertEquals(11L, err.get("code"));
            assertEquals("0.4.0", err.get("cniVersion"));
            assertTrue(JcnidClient.metrics(d.socket()).contains("jcnid_timeouts_total{plugin=\"gate\",command=\"ADD\"} 1\n"));
            assertTrue(d.log().contains("timeout=true"));
        }
    }

    /**
     * Runs blocked in a system call (open(2) of a FIFO), more of them than CPUs, stop
     * neither other requests nor status; their attachment's next request is answered 11 at once.
     */
    @Test
    void runsStuckInASystemCallBlockNobodyElse() throws Exception {
        int k = Runtime.getRuntime().availableProcessors() + 2;
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofMillis(500), 256, PluginRegistry::lookup);
                ExecutorService pool = Executors.newFixedThreadPool(k)) {
            d.stuckFifo = tmp.resolve("fifo");
            assertEquals(0, new ProcessBuilder("mkfifo", d.stuckFifo.toString()).start().waitFor());
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"stuck\"}";
            List<Future<JcnidClient.Reply>> stuck = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                String c = "s" + i;
                stuck.add(pool.submit(() -> d.exec("stuck", TestDaemon.env("ADD", c), conf)));
            }
            try {
                for (Future<JcnidClient.Reply> f : stuck) {
                    assertEquals(11L, Json.parseObject(f.get().result().stdoutText()).get("code"));
                }
                assertTrue(JcnidClient.health(d.socket()).contains("\nplugin_runs " + k + "\n"), JcnidClient.health(d.socket()));
                assertEquals(0, d.exec("static", TestDaemon.env("ADD", "other"), TestDaemon.STATIC_CONF).result().exitCode());

                Map<String, Object> again = Json.parseObject(d.exec("stuck", TestDaemon.env("DEL", "s0"), conf).result().stdoutText());
                assertEquals(11L, again.get("code"));
                assertEquals("jcnid: an earlier request for this attachment is still running", again.get("msg"));

                try (java.io.RandomAccessFile writer = new java.io.RandomAccessFile(d.stuckFifo.toFile(), "rw")) {
                    while (!JcnidClient.health(d.socket()).contains("\nplugin_runs 0\n")) Thread.sleep(10);
                    assertEquals(0, d.exec("stuck", TestDaemon.env("ADD", "s0"), conf).result().exitCode());
                }
            } finally {
                release(d.stuckFifo);
            }
        }
    }

    /** Lets every run blocked opening the FIFO go (a reader's open returns once a writer exists). */
    private static void release(Path fifo) {
        if (!Files.exists(fifo)) return;
        try {
            new java.io.RandomAccessFile(fifo.toFile(), "rw").close();
        } catch (IOException ignored) {
            // nothing was waiting
        }
    }

    @Test
    void unfinishedRunsCountAgainstMaxInFlight() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofMillis(300), 1, PluginRegistry::lookup)) {
            d.stuckFifo = tmp.resolve("fifo");
            assertEquals(0, new ProcessBuilder("mkfifo", d.stuckFifo.toString()).start().waitFor());
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"stuck\"}";
            try {
                assertEquals(11L, Json.parseObject(d.exec("stuck", TestDaemon.env("ADD", "s0"), conf).result().stdoutText()).get("code"));
                assertTrue(d.exec("static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF).declined());
                try (java.io.RandomAccessFile writer = new java.io.RandomAccessFile(d.stuckFifo.toFile(), "rw")) {
                    // Declined until the run has ended and the connection that saw it end has been counted out.
                    JcnidClient.Reply r = d.exec("static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF);
                    for (int i = 0; i < 3000 && r.declined(); i++) {
                        Thread.sleep(10);
                        r = d.exec("static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF);
                    }
                    assertEquals(0, r.result().exitCode());
                }
            } finally {
                release(d.stuckFifo);
            }
        }
    }

    @Test
    void beyondMaxInFlightRequestsAreDeclined() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofSeconds(30), 1, PluginRegistry::lookup);
                ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<JcnidClient.Reply> held = pool.submit(() -> d.exec("gate", TestDaemon.env("ADD", "c1"), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}"));
            assertTrue(d.gateEntered.await(30, TimeUnit.SECONDS), "the first request runs");
            assertTrue(d.exec("static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF).declined());
            d.gate.countDown();
            assertEquals(0, held.get().result().exitCode());
        }
    }

    @Test
    void shutdownFinishesRequestsInFlightAndRemovesItsFiles() throws Exception {
        TestDaemon d = new TestDaemon(tmp);
        try (ExecutorService pool = Executors.newSingleThreadExecutor()) {
            Future<JcnidClient.Reply> inFlight = pool.submit(() -> d.exec("gate", TestDaemon.env("ADD", "c1"), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}"));
            // Counted in flight is not yet accepted (a request read during shutdown is declined): wait for the plugin itself.
            assertTrue(d.gateEntered.await(30, TimeUnit.SECONDS));
            Thread stopper = Thread.ofPlatform().start(d.server::shutdown);
            while (Files.exists(d.socket())) Thread.sleep(5);
            assertThrows(IOException.class, () -> JcnidClient.health(d.socket()));
            d.gate.countDown();
            assertEquals(0, inFlight.get().result().exitCode());
            stopper.join();
            assertFalse(Files.exists(d.cfg.pidFile()));
            assertTrue(d.log().contains("jcnid stopped\n"), d.log());
        } finally {
            d.close();
        }
    }

    @Test
    void aStaleSocketIsReplacedButALiveOneIsNot() throws Exception {
        try (TestDaemon d = new TestDaemon(tmp)) {
            IOException e = assertThrows(IOException.class, () -> new TestDaemon(tmp));
            assertTrue(e.getMessage().contains("another daemon"), e.getMessage());
        }
        // a socket file nobody listens on, as kill -9 leaves it
        Path sock = tmp.resolve("run/jcnid.sock");
        try (var s = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            s.bind(UnixDomainSocketAddress.of(sock));
        }
        assertTrue(Files.exists(sock));
        try (TestDaemon d = new TestDaemon(tmp)) {
            assertTrue(JcnidClient.health(d.socket()).startsWith("status ok\n"));
        }
    }

    @Test
    void metricsAlsoOnALoopbackHttpPortWhenAsked() throws Exception {
        int port;
        try (var probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        DaemonConfig cfg = new DaemonConfig(tmp.resolve("s.sock"), tmp.resolve("p.pid"), null, Duration.ofSeconds(5),
                Duration.ofSeconds(1), 8, port, true, java.util.List.of());
        JcnidServer s = JcnidServer.start(cfg, PluginRegistry::lookup, new PrintStream(new ByteArrayOutputStream()),
                java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(System.getProperty("user.name")));
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertTrue(r.body().contains("jcnid_up 1\n"));
            assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
            HttpResponse<String> h = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(h.body().startsWith("status ok\n"));
        } finally {
            s.shutdown();
        }
    }

    /** Answers that together exceed the budget wait their turn (never all in memory at once) and all arrive whole. */
    @Test
    void answersBeyondTheBudgetWaitTheirTurnAndAllArrive() throws Exception {
        ByteBudget budget = new ByteBudget(4 << 20); // room for ~7 answers of 0.5 MB
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofSeconds(30), 256, PluginRegistry::lookup, false, budget);
                ExecutorService pool = Executors.newFixedThreadPool(100)) {
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"big\"}";
            List<Future<JcnidClient.Reply>> fs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String ctr = "ctr" + i;
                fs.add(pool.submit(() -> d.exec("big", TestDaemon.env("ADD", ctr), conf)));
            }
            for (Future<JcnidClient.Reply> f : fs) {
                JcnidClient.Reply r = f.get();
                assertEquals(0, r.result().exitCode(), r.result().stdoutText());
                assertEquals(TestDaemon.BIG_STDERR, r.result().stderr().length);
            }
            // A client has its answer a moment before the connection's thread gives its share back.
            for (int i = 0; i < 500 && budget.used() > 0; i++) Thread.sleep(10);
            assertEquals(0, budget.used(), "every answer gave its share back");
            String metrics = JcnidClient.metrics(d.socket());
            assertTrue(metrics.contains("jcnid_over_budget_total 0\n"), metrics);
            assertTrue(metrics.contains("jcnid_io_budget_bytes " + (4 << 20) + "\n"), metrics);
        }
    }

    /**
     * 500 clients that announce the largest body and send nothing, or trickle, hold a first chunk
     * at most (not 16 MiB each) and no plugin slot: a plugin call meanwhile is served, not declined;
     * the deadline drops them all.
     */
    @Test
    void idleAndTricklingClientsHoldLittleMemoryAndNoPluginSlot() throws Exception {
        ByteBudget budget = new ByteBudget(JcnidServer.ioBudget(128L << 20));
        List<SocketChannel> clients = new ArrayList<>();
        try (TestDaemon d = new TestDaemon(tmp, Duration.ofSeconds(30), 256, PluginRegistry::lookup, false, budget)) {
            try {
                for (int i = 0; i < 500; i++) {
                    SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(d.socket()));
                    clients.add(ch);
                    Protocol.writeFully(ch, ByteBuffer.wrap(header(1, Protocol.KIND_EXEC, Protocol.MAX_BODY)));
                    if (i % 2 == 0) Protocol.writeFully(ch, ByteBuffer.wrap(new byte[1024]));
                }
                for (int i = 0; i < 100 && d.server.metrics().inFlight.get() < 500; i++) Thread.sleep(20);
                JcnidClient.Reply r = d.exec("static", TestDaemon.env("ADD", "c1"), TestDaemon.STATIC_CONF);
                assertFalse(r.declined(), "idle clients took the plugin slots");
                assertEquals(0, r.result().exitCode(), r.result().stdoutText());
                assertTrue(budget.used() <= 2L * 500 * ByteBudget.FIRST_CHUNK, "held " + budget.used());
                for (SocketChannel ch : clients) {
                    try {
                        assertEquals(-1, ch.read(ByteBuffer.allocate(1)), "dropped without an answer");
                    } catch (java.net.SocketException e) {
                        // reset: dropped too
                    }
                }
                // The client sees the close before the connection's thread has given its share back.
                for (int i = 0; i < 500 && (budget.used() > 0 || d.server.metrics().inFlight.get() > 0); i++) Thread.sleep(10);
                assertEquals(0, budget.used());
                String metrics = JcnidClient.metrics(d.socket());
                assertTrue(metrics.contains("jcnid_deadline_drops_total 500\n"), metrics);
                assertEquals(0, d.exec("static", TestDaemon.env("ADD", "c2"), TestDaemon.STATIC_CONF).result().exitCode());
            } finally {
                for (SocketChannel ch : clients) ch.close();
            }
        }
    }

    /** The metrics port drops a client that starts a request and never finishes it. */
    @Test
    void aSlowHttpClientIsDropped() throws Exception {
        int port;
        try (var probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        DaemonConfig cfg = new DaemonConfig(tmp.resolve("s.sock"), tmp.resolve("p.pid"), null, Duration.ofSeconds(5),
                Duration.ofSeconds(1), 8, port, true, java.util.List.of());
        JcnidServer s = JcnidServer.start(cfg, PluginRegistry::lookup, new PrintStream(new ByteArrayOutputStream()),
                java.nio.file.FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(System.getProperty("user.name")));
        try (java.net.Socket slow = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
            slow.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            slow.setSoTimeout(60_000); // a bound for the test; the server's limit is 10 s
            try {
                assertEquals(-1, slow.getInputStream().read(), "closed without an answer");
            } catch (java.net.SocketException e) {
                // reset: closed too
            }
        } finally {
            s.shutdown();
        }
    }

    private static byte[] header(int version, int kind, int len) {
        return ByteBuffer.allocate(12).put(Protocol.MAGIC).put((byte) version).put((byte) kind).putShort((short) 0).putInt(len).array();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        return ByteBuffer.allocate(a.length + b.length).put(a).put(b).array();
    }

    /** Sends bytes (then half-closes when asked) and returns everything the daemon answered before closing. */
    private static byte[] raw(TestDaemon d, byte[] bytes, boolean halfClose) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(d.socket()))) {
            Protocol.writeFully(ch, ByteBuffer.wrap(bytes));
            if (halfClose) ch.shutdownOutput();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(4096);
            try {
                while (ch.read(b.clear()) > 0) out.write(b.array(), 0, b.position());
            } catch (java.net.SocketException e) {
                // a close with our bytes still unread shows as a reset: still a clean close
            }
            return out.toByteArray();
        }
    }

    private static void assertError(byte[] answer, String msg) throws IOException {
        assertTrue(answer.length > 13, "no answer");
        assertEquals('R', answer[0]);
        Protocol.Result r = Protocol.readResult(java.nio.channels.Channels.newChannel(
                new java.io.ByteArrayInputStream(answer, 1, answer.length - 1)));
        assertEquals(1, r.exitCode());
        Map<String, Object> err = Json.parseObject(r.stdoutText());
        assertEquals(6L, err.get("code"));
        assertEquals("jcnid: " + msg, err.get("msg"));
    }
}
