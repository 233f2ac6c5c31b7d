package io.jcni.daemon;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.jcni.common.AtomicFile;
import io.jcni.linux.Netns;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Phases;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.Skel;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The daemon proper: serves {@link Protocol} requests on a root-only unix socket by running the
 * plugin in-process through {@link Skel#run}, exactly as the standalone plugin would.
 *
 * <p>One virtual thread per connection; the plugin itself runs on a platform thread so the
 * connection can answer "try again later" (CNI error 11) when it exceeds the request timeout.
 * Requests for the same attachment are serialized by {@link AttachmentLocks}.
 *
 * <p><b>Why plugins run on platform threads.</b> Plugin code blocks in native calls: flock(2) on
 * shared state, netlink receives, open(2) of paths from the request. A virtual thread inside a
 * native call pins its carrier, and there are only as many carriers as CPUs. On virtual threads,
 * three concurrent nft requests on 2 CPUs deadlocked jcnid for good: both carriers were pinned in
 * flock() waiting for the nft state lock while its holder, parked waiting for its {@code nft}
 * child, needed a carrier to continue; and CPU-count requests stuck in open() of a FIFO stopped
 * jcnid from answering anyone, {@code status} included. On a platform thread a blocked run blocks
 * nobody but itself; connections stay on virtual threads, where they only wait in socket I/O that
 * the JDK parks properly. The threads come from a cached pool (starting a thread per run cost
 * 2-4 ms under load, see daemon/README.md) that has no bound of its own: a bounded pool would
 * deadlock when a delegate comes back through the shim while every worker waits for it. Runs are
 * bounded by {@code --max-in-flight} instead, runs that outlived their timeout included.
 */
public final class JcnidServer {
    /**
     * Set by the shim: its pid. A plugin's host-side work belongs in the caller's network namespace
     * (a runtime may itself run inside one), not the daemon's, and the caller is alive and blocked
     * on us while the request runs, so /proc/PID/ns/net names it reliably.
     */
    static final String CALLER_PID = "JCNI_CALLER_PID";


    /** How long a client may take to send its request, or to take the answer. */
    static final Duration IO_TIMEOUT = Duration.ofSeconds(10);

    private final DaemonConfig cfg;
    private final Function<String, Supplier<Plugin>> registry;
    private final PrintStream log;
    private final Metrics metrics = new Metrics();
    private final AttachmentLocks locks = new AttachmentLocks();
    /** Work requests leave for after their answer (deleting retired links). */
    private final DeferredWork deferred;
    private final ExecutorService workers = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("jcnid-plugin-", 0).daemon().factory());
    /** Plugin runs not finished yet, including those whose client already got "timed out". */
    private final AtomicInteger pluginRuns = new AtomicInteger();
    /** Attachments whose last run outlived the timeout and still runs: their next requests fail at once. */
    private final Map<String, AtomicBoolean> overdue = new ConcurrentHashMap<>();
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "jcnid-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final AtomicInteger connections = new AtomicInteger();
    private final List<DaemonService.Running> services = new CopyOnWriteArrayList<>();
    /** The only user whose connections are served: root (uid 0). */
    private final UserPrincipal peer;
    private final Path socket;
    /** The socket came from the service manager (socket activation): it owns the file, we never remove it. */
    private final boolean activated;
    private ServerSocketChannel server;
    private HttpServer http;
    private Thread acceptor;
    private volatile boolean shuttingDown;
    private volatile boolean stopped;

    private JcnidServer(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal peer,
            SocketActivation.Listener inherited) {
        this.cfg = cfg;
        this.registry = registry;
        this.log = log;
        this.deferred = new DeferredWork(log);
        this.socket = inherited != null ? inherited.path() : cfg.socket().toAbsolutePath();
        this.activated = inherited != null;
        if (activated) this.server = inherited.channel();
        this.peer = peer;
    }

    /** Binds the socket, writes the pid file and starts serving on a background thread. */
    public static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log)
            throws IOException {
        return start(cfg, registry, log, FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("0"));
    }

    /** As {@link #start(DaemonConfig, Function, PrintStream)}, serving only peers running as user (tests). */
    static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal user)
            throws IOException {
        JcnidServer s = new JcnidServer(cfg, registry, log, user, SocketActivation.inherited());
        s.bind();
        return s;
    }

    public Metrics metrics() {
        return metrics;
    }

    /** The metrics exposition, with the deferred work's gauges. */
    String renderMetrics() {
        return metrics.render() + Metrics.deferred(deferred.pending.get(), deferred.done.get(), deferred.failed.get(), deferred.shared.get());
    }

    public Path socket() {
        return socket;
    }

    /** The loopback HTTP port serving /metrics, or 0 when off. */
    public int httpPort() {
        return http == null ? 0 : http.getAddress().getPort();
    }

    private void bind() throws IOException {
        if (!activated) bindSocketFile();
        writePidFile();
        if (cfg.metricsPort() > 0) startHttp();
        acceptor = Thread.ofPlatform().name("jcnid-accept").start(this::acceptLoop);
        logLine("jcnid started pid=" + ProcessHandle.current().pid() + " socket=" + quote(socket.toString())
                + (activated ? " activated=true" : "")
                + " request_timeout_ms=" + cfg.requestTimeout().toMillis() + " metrics_port=" + cfg.metricsPort());
    }

    private void bindSocketFile() throws IOException {
        Path dir = socket.getParent();
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } else {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(dir);
            if (p.contains(PosixFilePermission.OTHERS_WRITE) || p.contains(PosixFilePermission.GROUP_WRITE)) {
                logLine("jcnid warning=\"socket directory " + dir + " is writable by others; prefer a 0700 directory\"");
            }
        }
        StaleSocket.removeIfStale(socket);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket), 512);
        // The 0700 directory already keeps others out between bind and chmod; SO_PEERCRED is checked too.
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
    }

    private void writePidFile() throws IOException {
        Path pid = cfg.pidFile().toAbsolutePath();
        Files.createDirectories(pid.getParent());
        AtomicFile.write(pid, ProcessHandle.current().pid() + "\n", AtomicFile.PUBLIC, AtomicFile.Durability.ATOMIC_ONLY);
    }

    private void startHttp() throws IOException {
        http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), cfg.metricsPort()), 16);
        http.createContext("/metrics", ex -> httpReply(ex, "text/plain; version=0.0.4; charset=utf-8", renderMetrics()));
        http.createContext("/healthz", ex -> httpReply(ex, "text/plain; charset=utf-8", health()));
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        http.start();
    }

    private static void httpReply(HttpExchange ex, String type, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(200, b.length);
        try (OutputStream o = ex.getResponseBody()) {
            o.write(b);
        }
    }

    private void acceptLoop() {
        while (!shuttingDown) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                break;
            } catch (IOException e) {
                if (shuttingDown) break;
                logLine("jcnid error=\"accept: " + e.getMessage() + "\"");
                sleep(10);
                continue;
            }
            connections.incrementAndGet();
            Thread.ofVirtual().name("jcnid-conn").start(() -> {
                try (ch) {
                    serve(ch);
                } catch (IOException | RuntimeException e) {
                    if (!(e instanceof ClosedChannelException)) logLine("jcnid connection_error=" + quote(String.valueOf(e)));
                } finally {
                    connections.decrementAndGet();
                }
            });
        }
    }

    private void serve(SocketChannel ch) throws IOException {
        UnixDomainPrincipal cred = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!peer.equals(cred.user())) {
            metrics.rejectedPeers.incrementAndGet();
            logLine("jcnid rejected_peer=" + quote(cred.user().getName()));
            return;
        }
        int inFlight = metrics.inFlight.incrementAndGet();
        try {
            Protocol.Header h;
            ByteBuffer body;
            ScheduledFuture<?> dog = watchdog.schedule(() -> closeQuietly(ch), IO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            try {
                ByteBuffer head = ByteBuffer.allocate(Protocol.HEADER_BYTES);
                while (head.hasRemaining()) {
                    if (ch.read(head) < 0) {
                        protocolError("truncated header (" + head.position() + " bytes)");
                        return; // nothing parseable: a clean close
                    }
                }
                h = Protocol.parseHeader(head);
                if (h == null) {
                    protocolError("bad magic");
                    return;
                }
                if (h.version() != Protocol.VERSION) {
                    decline(ch, "protocol version " + h.version());
                    return;
                }
                if (h.bodyLength() < 0 || h.bodyLength() > Protocol.MAX_BODY) {
                    protocolError("body of " + Integer.toUnsignedString(h.bodyLength()) + " bytes is too large");
                    malformed(ch, "request too large", "body of " + Integer.toUnsignedString(h.bodyLength())
                            + " bytes exceeds " + Protocol.MAX_BODY);
                    return;
                }
                body = ByteBuffer.allocate(h.bodyLength());
                while (body.hasRemaining()) {
                    if (ch.read(body) < 0) {
                        protocolError("truncated body");
                        malformed(ch, "truncated request", "got " + body.position() + " of " + h.bodyLength() + " bytes");
                        return;
                    }
                }
                body.flip();
            } finally {
                dog.cancel(false);
            }
            switch (h.kind()) {
                case Protocol.KIND_HEALTH -> reply(ch, Protocol.STATUS_RESULT, new Protocol.Result(0, utf8(health()), new byte[0]));
                case Protocol.KIND_METRICS -> reply(ch, Protocol.STATUS_RESULT, new Protocol.Result(0, utf8(renderMetrics()), new byte[0]));
                // Declined only once read, so the client gets its 'F' rather than a broken pipe.
                case Protocol.KIND_EXEC -> {
                    if (inFlight > cfg.maxInFlight()) decline(ch, "busy");
                    else exec(ch, body);
                }
                default -> {
                    protocolError("unknown kind " + h.kind());
                    malformed(ch, "unknown request kind", Integer.toString(h.kind()));
                }
            }
        } finally {
            metrics.inFlight.decrementAndGet();
        }
    }

    private void exec(SocketChannel ch, ByteBuffer body) throws IOException {
        Protocol.Exec ex;
        try {
            ex = Protocol.parseExec(body);
        } catch (Protocol.ProtocolException e) {
            protocolError(e.getMessage());
            malformed(ch, "malformed request", e.getMessage());
            return;
        }
        Supplier<Plugin> plugin = registry.apply(ex.type());
        if (plugin == null) {
            decline(ch, "unknown plugin type " + ex.type());
            return;
        }
        if (shuttingDown) {
            decline(ch, "shutting down");
            return;
        }
        Map<String, String> env = new HashMap<>();
        for (String e : ex.env()) {
            int eq = e.indexOf('=');
            if (eq > 0) env.put(e.substring(0, eq), e.substring(eq + 1)); // like System.getenv(): the last one wins
        }
        String callerPid = env.remove(CALLER_PID);
        String command = commandLabel(env.get("CNI_COMMAND"));
        CniCommand cmd = CniCommand.of(env.getOrDefault("CNI_COMMAND", ""));
        String lockKey = cmd != null && cmd.isPerAttachment()
                ? AttachmentLocks.key(ex.type(), env.getOrDefault("CNI_CONTAINERID", ""), env.getOrDefault("CNI_IFNAME", ""),
                        networkName(ex.stdin()))
                : null;

        if (pluginRuns.get() >= cfg.maxInFlight()) {
            decline(ch, "busy: " + pluginRuns.get() + " plugin runs not finished");
            return;
        }

        // From here the plugin may run: a client that loses us after this must not blindly re-run an ADD.
        Protocol.writeFully(ch, ByteBuffer.wrap(new byte[] {Protocol.STATUS_ACCEPTED}));

        long t0 = System.nanoTime();
        Phases phases = new Phases();
        phases.enter(Phases.Phase.QUEUE);
        AtomicBoolean stuck = lockKey == null ? null : overdue.get(lockKey);
        if (stuck != null && stuck.get()) {
            overdue.remove(lockKey, stuck);
            stuck = null;
        }
        if (stuck != null) {
            // Waiting behind a run that is already overdue would only time out too, holding a thread.
            Skel.Outcome out = errorOutcome(ex.stdin(), new CniException(ErrorCode.TRY_AGAIN_LATER,
                    "jcnid: an earlier request for this attachment is still running",
                    "it did not finish within " + cfg.requestTimeout().toMillis() + " ms; try again later"));
            finish(ch, ex.type(), command, env, t0, out, false, new byte[0], phases);
            return;
        }
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream pluginLog = new PrintStream(stderr, true, StandardCharsets.UTF_8);
        pluginRuns.incrementAndGet();
        AtomicBoolean finished = new AtomicBoolean(); // a cancelled Future is "done" while its thread still runs
        Future<Skel.Outcome> f;
        try {
            f = workers.submit(() -> {
                try {
                    AttachmentLocks.Entry held = lockKey == null ? null : locks.lock(lockKey);
                    try {
                        // Entering the caller's namespace (a thread hop) and coming back are NETNS;
                        // the skeleton marks its own phases in between and restores this one.
                        phases.enter(Phases.Phase.NETNS);
                        return inCallersNetns(callerPid, () -> Skel.run(plugin, env, ex.stdin(),
                                Delegation.context(registry, pluginLog, phases, cfg.deferLinkDeletion() ? deferred : null)));
                    } finally {
                        if (held != null) locks.unlock(lockKey, held);
                    }
                } finally {
                    finished.set(true);
                    if (lockKey != null) overdue.remove(lockKey, finished);
                    pluginRuns.decrementAndGet();
                }
            });
        } catch (RuntimeException e) { // RejectedExecutionException (shut down), OutOfMemoryError is not caught
            pluginRuns.decrementAndGet();
            throw e;
        }
        Skel.Outcome out;
        boolean timedOut = false;
        try {
            out = f.get(cfg.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            if (lockKey != null && !finished.get()) {
                overdue.put(lockKey, finished);
                if (finished.get()) overdue.remove(lockKey, finished); // it ended meanwhile
            }
            timedOut = true;
            out = errorOutcome(ex.stdin(), new CniException(ErrorCode.TRY_AGAIN_LATER, "jcnid: request timed out",
                    "the " + ex.type() + " plugin did not finish " + command + " within " + cfg.requestTimeout().toMillis()
                            + " ms; it may still complete, and later requests for this attachment wait for it", e));
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            c.printStackTrace(pluginLog);
            out = errorOutcome(ex.stdin(), new CniException(ErrorCode.INTERNAL, "internal error", String.valueOf(c), c));
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            out = errorOutcome(ex.stdin(), new CniException(ErrorCode.TRY_AGAIN_LATER, "jcnid: interrupted", "", e));
        }
        // A run that timed out still owns its clock: its phases are left out rather than read racily.
        finish(ch, ex.type(), command, env, t0, out, timedOut, stderr.toByteArray(), timedOut ? null : phases);
    }

    private void finish(SocketChannel ch, String type, String command, Map<String, String> env, long t0, Skel.Outcome out,
                        boolean timedOut, byte[] stderr, Phases phases) throws IOException {
        // The thread hand-back to this connection counts as RESULT, with the encoding of the answer.
        if (phases != null) phases.enter(Phases.Phase.RESULT);
        long nanos = System.nanoTime() - t0;
        if (phases != null) phases.stop();
        metrics.record(type, command, nanos, out.exitCode(), timedOut, phases);
        logLine(String.format("jcnid plugin=%s cmd=%s container=%s ifname=%s dur_ms=%.3f exit=%d%s%s", quote(type),
                command, quote(env.getOrDefault("CNI_CONTAINERID", "")), quote(env.getOrDefault("CNI_IFNAME", "")),
                nanos / 1e6, out.exitCode(), timedOut ? " timeout=true" : "",
                cfg.logPhases() && phases != null ? " phases=" + phases.summary() : ""));
        reply(ch, (byte) 0, new Protocol.Result(out.exitCode(), utf8(out.stdout()), stderr));
    }

    /** The error as the skeleton would print it: in the configuration's cniVersion when there is one. */
    static Skel.Outcome errorOutcome(byte[] stdin, CniException e) {
        String v = CniVersion.CURRENT.toString();
        try {
            if (Json.parseObject(new String(stdin, StandardCharsets.UTF_8)).get("cniVersion") instanceof String s && !s.isEmpty()) v = s;
        } catch (RuntimeException ignored) {
            // not JSON: the current version
        }
        return new Skel.Outcome(Json.writePretty(e.toJson(v)), 1);
    }

    private static String networkName(byte[] stdin) {
        try {
            return Json.parseObject(new String(stdin, StandardCharsets.UTF_8)).get("name") instanceof String s ? s : "";
        } catch (RuntimeException e) {
            return ""; // the skeleton will report the bad configuration
        }
    }

    private static String commandLabel(String c) {
        if (c == null || c.isEmpty()) return "none";
        CniCommand cmd = CniCommand.of(c);
        return cmd == null ? "other" : c;
    }

    private void malformed(SocketChannel ch, String msg, String details) throws IOException {
        Skel.Outcome o = errorOutcome(new byte[0], new CniException(ErrorCode.DECODING_FAILURE, "jcnid: " + msg, details));
        try {
            reply(ch, Protocol.STATUS_RESULT, new Protocol.Result(o.exitCode(), utf8(o.stdout()), new byte[0]));
        } catch (IOException e) {
            // the peer is gone; nothing to tell
        }
    }

    private void decline(SocketChannel ch, String why) {
        metrics.declined.incrementAndGet();
        logLine("jcnid declined=" + quote(why));
        try {
            Protocol.writeFully(ch, ByteBuffer.wrap(new byte[] {Protocol.STATUS_FALLBACK}));
        } catch (IOException ignored) {
            // the client falls back either way
        }
    }

    private void reply(SocketChannel ch, byte status, Protocol.Result r) throws IOException {
        ScheduledFuture<?> dog = watchdog.schedule(() -> closeQuietly(ch), IO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            Protocol.writeFully(ch, Protocol.encodeResult(status, r));
        } finally {
            dog.cancel(false);
        }
    }

    private void protocolError(String what) {
        metrics.protocolErrors.incrementAndGet();
        logLine("jcnid protocol_error=" + quote(what));
    }

    /** The health answer: "key value" lines. */
    public String health() {
        return "status " + (shuttingDown ? "stopping" : "ok") + "\npid " + ProcessHandle.current().pid()
                + "\nuptime_seconds " + (System.currentTimeMillis() - metrics.startMillis()) / 1000
                + "\nrequests " + metrics.totalRequests() + "\nin_flight " + metrics.inFlight.get()
                + "\nplugin_runs " + pluginRuns.get()
                + "\ndeferred " + deferred.pending.get()
                + "\nsocket " + socket + "\n" + serviceStatus();
    }

    /** Hosts started services: their status joins {@link #health}, and {@link #shutdown} stops them first. */
    public void addServices(List<DaemonService.Running> started) {
        services.addAll(started);
    }

    private String serviceStatus() {
        StringBuilder sb = new StringBuilder();
        for (DaemonService.Running s : services) sb.append(s.status());
        return sb.toString();
    }

    /**
     * Graceful stop: the socket file goes first (new shims fall back to the standalone plugins),
     * then the listening socket; requests in flight get up to the drain timeout; then the pid file.
     * Idempotent; safe from a shutdown hook.
     */
    public synchronized void shutdown() {
        if (stopped) return;
        shuttingDown = true;
        logLine("jcnid stopping in_flight=" + connections.get());
        // Services first, while the plugin socket still serves: the overlay releases its lease cleanly.
        DaemonServices.stop(services, log);
        try {
            // An activated socket stays: the service manager keeps listening and starts us again on demand.
            if (!activated) Files.deleteIfExists(socket);
        } catch (IOException e) {
            logLine("jcnid error=" + quote("removing " + socket + ": " + e.getMessage()));
        }
        closeQuietly(server);
        if (http != null) http.stop(0);
        if (acceptor != null) {
            try {
                acceptor.join(Duration.ofSeconds(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long deadline = System.nanoTime() + cfg.drainTimeout().toNanos();
        while (connections.get() > 0 && System.nanoTime() < deadline) sleep(5);
        int left = connections.get();
        // What answered requests left behind, within the same drain time: nothing half done.
        boolean drained = deferred.drain(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        try {
            Path pid = cfg.pidFile().toAbsolutePath();
            if (Files.isRegularFile(pid) && Files.readString(pid).trim().equals(Long.toString(ProcessHandle.current().pid()))) {
                Files.delete(pid);
            }
        } catch (IOException e) {
            logLine("jcnid error=" + quote("removing pid file: " + e.getMessage()));
        }
        workers.shutdown();
        watchdog.shutdownNow();
        stopped = true;
        logLine("jcnid stopped" + (left > 0 ? " abandoned=" + left : "") + (drained ? "" : " deferred_left=" + deferred.pending.get()));
        notifyAll();
    }

    /** Blocks until {@link #shutdown} has finished. */
    public synchronized void awaitTermination() throws InterruptedException {
        while (!stopped) wait();
    }

    private void logLine(String s) {
        log.println(Instant.now() + " " + s);
    }

    /** logfmt quoting: bare when safe, else double-quoted with escapes. */
    static String quote(String s) {
        boolean bare = !s.isEmpty();
        for (int i = 0; i < s.length() && bare; i++) {
            char c = s.charAt(i);
            bare = c > ' ' && c < 127 && c != '"' && c != '=' && c != '\\';
        }
        if (bare) return s;
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < ' ' || c == 127) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void closeQuietly(Closeable c) {
        try {
            if (c != null) c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Runs {@code call} in the network namespace of the process {@code pid} (this thread enters it for the call). */
    private static Skel.Outcome inCallersNetns(String pid, Callable<Skel.Outcome> call) throws Exception {
        if (pid == null || pid.isEmpty() || !pid.chars().allMatch(c -> c >= '0' && c <= '9')) return call.call();
        try (Netns caller = Netns.open("/proc/" + pid + "/ns/net");
             Netns own = Netns.current()) {
            if (caller.sameAs(own)) return call.call();
            // This pooled platform thread enters the caller's namespace itself rather than handing
            // the run to a namespace thread and waiting: one thread hop less per request.
            return caller.runOnCallingThread(call::call);
        }
    }
}
