package io.jcni.daemon;

import io.jcni.common.AtomicFile;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.Skel;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The daemon proper: serves {@link Protocol} requests on a root-only unix socket by running the
 * plugin in-process through {@link Skel#run}, exactly as the standalone plugin would. This class
 * owns the daemon's life (socket file, pid file, hosted services, health, graceful stop); the
 * {@link Connections} read and answer requests and the {@link RequestRunner} runs the plugins.
 */
public final class JcnidServer {
    private final DaemonConfig cfg;
    private final DaemonLog log;
    private final Metrics metrics = new Metrics();
    /** Work requests leave for after their answer (deleting retired links). */
    private final DeferredWork deferred;
    private final RequestRunner runner;
    /** What connections may hold at once of request bodies and answers. */
    private final ByteBudget budget;
    private final HostedServices services;
    /** The only user whose connections are served: root (uid 0). */
    private final UserPrincipal peer;
    private final Path socket;
    /** The socket came from the service manager (socket activation): it owns the file, we never remove it. */
    private final boolean activated;
    private ServerSocketChannel server;
    private Connections connections;
    private MetricsEndpoint http;
    private volatile boolean shuttingDown;
    private volatile boolean stopped;

    private JcnidServer(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal peer,
            SocketActivation.Listener inherited, HostedServices services, ByteBudget budget) {
        this.cfg = cfg;
        this.budget = budget;
        this.services = services;
        this.log = new DaemonLog(log);
        this.deferred = new DeferredWork(log);
        this.runner = new RequestRunner(cfg, registry, metrics, this.log, deferred, () -> shuttingDown);
        this.socket = inherited != null ? inherited.path() : cfg.socket().toAbsolutePath();
        this.activated = inherited != null;
        if (activated) this.server = inherited.channel();
        this.peer = peer;
    }

    /** Binds the socket, writes the pid file and starts serving on a background thread. */
    public static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log)
            throws IOException {
        return start(cfg, registry, log, PeerCredentials.root());
    }

    /** As {@link #start(DaemonConfig, Function, PrintStream)}, serving only peers running as user (tests). */
    static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal user)
            throws IOException {
        return start(cfg, registry, log, user, HostedServices.none());
    }

    /**
     * Binds and serves while {@code services} (declared, not started yet) are started by the caller:
     * the health answer says "services starting" until they are, so {@code jcnid start} can wait for them.
     */
    static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal user,
            HostedServices services) throws IOException {
        return start(cfg, registry, log, user, services, new ByteBudget(ioBudget(Runtime.getRuntime().maxMemory())));
    }

    /** As above, with the budget given (tests). */
    static JcnidServer start(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, PrintStream log, UserPrincipal user,
            HostedServices services, ByteBudget budget) throws IOException {
        JcnidServer s = new JcnidServer(cfg, registry, log, user, SocketActivation.inherited(), services, budget);
        s.bind();
        return s;
    }

    /**
     * The budget for request bodies and answers held at once: a quarter of the heap, so the rest
     * stays for the plugins' own work; at least one largest body and a bit, at most 64 MiB (with
     * jcnid's -Xmx128m: ~31 MiB).
     */
    static long ioBudget(long maxHeap) {
        return Math.clamp(maxHeap / 4, Protocol.MAX_BODY + (1 << 20), 64L << 20);
    }


    public Metrics metrics() {
        return metrics;
    }

    /** The metrics exposition, with the deferred work's gauges. */
    String renderMetrics() {
        return metrics.render() + Metrics.deferred(deferred.pending.get(), deferred.done.get(), deferred.failed.get(), deferred.shared.get())
                + Metrics.budget(budget.used(), budget.capacity());
    }

    public Path socket() {
        return socket;
    }

    /** The loopback HTTP port serving /metrics, or 0 when off. */
    public int httpPort() {
        return http == null ? 0 : http.port();
    }

    private void bind() throws IOException {
        if (!activated) bindSocketFile();
        writePidFile();
        if (cfg.metricsPort() > 0) http = MetricsEndpoint.start(cfg.metricsPort(), this::renderMetrics, this::health);
        connections = new Connections(server, peer, cfg, runner, metrics, log, this::health, this::renderMetrics, () -> shuttingDown,
                budget);
        connections.start();
        log.line("jcnid started pid=" + ProcessHandle.current().pid() + " socket=" + DaemonLog.quote(socket.toString())
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
                log.line("jcnid warning=\"socket directory " + dir + " is writable by others; prefer a 0700 directory\"");
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

    /** The health answer: "key value" lines. */
    public String health() {
        return "status " + (shuttingDown ? "stopping" : "ok") + "\npid " + ProcessHandle.current().pid()
                + "\nuptime_seconds " + (System.currentTimeMillis() - metrics.startMillis()) / 1000
                + "\nrequests " + metrics.totalRequests() + "\nin_flight " + metrics.inFlight.get()
                + "\nplugin_runs " + runner.pluginRuns()
                + "\ndeferred " + deferred.pending.get()
                + "\nsocket " + socket + "\n" + services.status();
    }

    /** Hosts services started elsewhere: their status joins {@link #health}, and {@link #shutdown} stops them first. */
    public void addServices(List<DaemonService.Running> started) {
        started.forEach(services::adopt);
    }

    /**
     * Graceful stop: the socket file goes first (new shims fall back to the standalone plugins),
     * then the listening socket; requests in flight get up to the drain timeout; then the pid file.
     * Idempotent; safe from a shutdown hook.
     */
    public synchronized void shutdown() {
        if (stopped) return;
        shuttingDown = true;
        log.line("jcnid stopping in_flight=" + connections.open());
        // Services first, while the plugin socket still serves: the overlay releases its lease cleanly.
        services.stop(log.out);
        try {
            // An activated socket stays: the service manager keeps listening and starts us again on demand.
            if (!activated) Files.deleteIfExists(socket);
        } catch (IOException e) {
            log.line("jcnid error=" + DaemonLog.quote("removing " + socket + ": " + e.getMessage()));
        }
        connections.stopAccepting();
        if (http != null) http.close();
        long deadline = System.nanoTime() + cfg.drainTimeout().toNanos();
        while (connections.open() > 0 && System.nanoTime() < deadline) Connections.sleep(5);
        int left = connections.open();
        // What answered requests left behind, within the same drain time: nothing half done.
        boolean drained = deferred.drain(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        removePidFile();
        runner.shutdown();
        connections.shutdown();
        stopped = true;
        log.line("jcnid stopped" + (left > 0 ? " abandoned=" + left : "") + (drained ? "" : " deferred_left=" + deferred.pending.get()));
        notifyAll();
    }

    private void removePidFile() {
        try {
            Path pid = cfg.pidFile().toAbsolutePath();
            if (Files.isRegularFile(pid) && Files.readString(pid).trim().equals(Long.toString(ProcessHandle.current().pid()))) {
                Files.delete(pid);
            }
        } catch (IOException e) {
            log.line("jcnid error=" + DaemonLog.quote("removing pid file: " + e.getMessage()));
        }
    }

    /** Blocks until {@link #shutdown} has finished. */
    public synchronized void awaitTermination() throws InterruptedException {
        while (!stopped) wait();
    }
}
