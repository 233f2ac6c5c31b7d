package io.jcni.daemon;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.Result;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/** An in-process jcnid on a socket in a temp directory, serving the current user, with test plugins. */
final class TestDaemon implements AutoCloseable {

    static final String STATIC_CONF = """
            {"cniVersion":"1.0.0","name":"net1","type":"static","ipam":{"type":"static",
             "addresses":[{"address":"10.1.2.3/24","gateway":"10.1.2.1"}],
             "routes":[{"dst":"0.0.0.0/0"}],"dns":{"nameservers":["10.1.2.1"]}}}""";

    /** "slow": ADD sleeps {@link #slowMillis} and records how many ran at once per container. */
    final AtomicInteger slowRunning = new AtomicInteger();
    final AtomicInteger slowMaxRunning = new AtomicInteger();
    final Map<String, AtomicInteger> perContainer = new ConcurrentHashMap<>();
    final Map<String, Integer> perContainerMax = new ConcurrentHashMap<>();
    volatile long slowMillis = 100;
    /** "gate": ADD blocks until the latch opens. */
    volatile CountDownLatch gate = new CountDownLatch(1);
    /** Opens when a "gate" ADD is running, i.e. the daemon has accepted it. */
    final CountDownLatch gateEntered = new CountDownLatch(1);

    /** "stuck": ADD opens this FIFO for reading, so it blocks in open(2) until a writer comes. */
    volatile Path stuckFifo;

    final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
    final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);
    final JcnidServer server;
    final DaemonConfig cfg;

    TestDaemon(Path dir) throws IOException {
        this(dir, Duration.ofSeconds(30), 256, PluginRegistry::lookup);
    }

    TestDaemon(Path dir, Duration timeout, int maxInFlight, Function<String, Supplier<Plugin>> base) throws IOException {
        this(dir, timeout, maxInFlight, base, false);
    }

    TestDaemon(Path dir, Duration timeout, int maxInFlight, Function<String, Supplier<Plugin>> base, boolean logPhases)
            throws IOException {
        this(dir, timeout, maxInFlight, base, logPhases, new ByteBudget(JcnidServer.ioBudget(128L << 20)));
    }

    /** With the budget for request bodies and answers given. */
    TestDaemon(Path dir, Duration timeout, int maxInFlight, Function<String, Supplier<Plugin>> base, boolean logPhases,
            ByteBudget budget) throws IOException {
        cfg = new DaemonConfig(dir.resolve("run/jcnid.sock"), dir.resolve("run/jcnid.pid"), null, timeout,
                Duration.ofSeconds(5), maxInFlight, 0, true, java.util.List.of(), logPhases);
        Function<String, Supplier<Plugin>> registry = t -> switch (t) {
            case "slow" -> Slow::new;
            case "gate" -> Gate::new;
            case "stuck" -> Stuck::new;
            case "big" -> Big::new;
            default -> base.apply(t);
        };
        server = JcnidServer.start(cfg, registry, log,
                FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(System.getProperty("user.name")),
                HostedServices.none(), budget);
    }

    Path socket() {
        return cfg.socket();
    }

    String log() {
        return logBytes.toString(StandardCharsets.UTF_8);
    }

    JcnidClient.Reply exec(String type, Map<String, String> env, String stdin) throws IOException {
        return JcnidClient.exec(socket(), type, env, stdin.getBytes(StandardCharsets.UTF_8));
    }

    static Map<String, String> env(String command, String container) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", container);
        env.put("CNI_NETNS", "/var/run/netns/none");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
        return env;
    }

    @Override
    public void close() {
        gate.countDown();
        server.shutdown();
    }

    private static Result result() {
        return new Result("1.1.0", List.of(), List.of(new Result.IpConfig(Cidr.parse("10.9.0.2/24"), null, null)), List.of(), null);
    }

    final class Slow implements Plugin {
        @Override
        public Result add(PluginRequest req) throws Exception {
            int now = slowRunning.incrementAndGet();
            slowMaxRunning.accumulateAndGet(now, Math::max);
            int mine = perContainer.computeIfAbsent(req.containerId(), k -> new AtomicInteger()).incrementAndGet();
            perContainerMax.merge(req.containerId(), mine, Math::max);
            try {
                Thread.sleep(slowMillis);
                return result();
            } finally {
                perContainer.get(req.containerId()).decrementAndGet();
                slowRunning.decrementAndGet();
            }
        }

        @Override
        public void del(PluginRequest req) {}

        @Override
        public void check(PluginRequest req) {}
    }

    final class Stuck implements Plugin {
        @Override
        public Result add(PluginRequest req) throws Exception {
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(stuckFifo)) {
                return result();
            }
        }

        @Override
        public void del(PluginRequest req) {}

        @Override
        public void check(PluginRequest req) {}
    }

    /** "big": ADD writes {@link #BIG_STDERR} bytes to its log, which come back as the answer's stderr. */
    static final int BIG_STDERR = 512 << 10;

    static final class Big implements Plugin {
        @Override
        public Result add(PluginRequest req) {
            req.log().print("x".repeat(BIG_STDERR));
            return result();
        }

        @Override
        public void del(PluginRequest req) {}

        @Override
        public void check(PluginRequest req) {}
    }

    final class Gate implements Plugin {
        @Override
        public Result add(PluginRequest req) throws Exception {
            gateEntered.countDown();
            gate.await();
            return result();
        }

        @Override
        public void del(PluginRequest req) {}

        @Override
        public void check(PluginRequest req) {}
    }
}
