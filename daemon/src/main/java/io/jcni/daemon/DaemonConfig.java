package io.jcni.daemon;

import io.jcni.common.Flags;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The daemon's settings, from command-line flags.
 *
 * @param socket         the unix socket (its directory is created 0700 when missing)
 * @param pidFile        where the pid is written; next to the socket unless given
 * @param logFile        request log and diagnostics; null means stderr
 * @param requestTimeout how long one plugin request may run before it is answered "try again later"
 * @param drainTimeout   how long shutdown waits for requests in flight
 * @param maxInFlight    requests (read whole, not yet answered) served at once; beyond that they are declined (fallback)
 * @param metricsPort    a 127.0.0.1 HTTP port for /metrics and /healthz; 0 means off
 * @param foreground     {@code start} runs the daemon in this process instead of detaching it
 * @param serviceArgs    flags of hosted {@link DaemonService}s (e.g. {@code --overlay --etcd-endpoints URL}), in order
 * @param logPhases      each request's log line also says where its time went ({@code phases=parse:0.1,...})
 * @param deferLinkDeletion DEL only retires veths and ifbs before answering and they are deleted together
 *                       right after (daemon/README.md; the default); off ({@code --delete-links-now}): DEL
 *                       deletes them before answering, as the reference plugins do
 */
public record DaemonConfig(Path socket, Path pidFile, Path logFile, Duration requestTimeout, Duration drainTimeout,
        int maxInFlight, int metricsPort, boolean foreground, List<String> serviceArgs, boolean logPhases, boolean deferLinkDeletion) {

    /** Without per-request phase logging; link deletion deferred (the default). */
    public DaemonConfig(Path socket, Path pidFile, Path logFile, Duration requestTimeout, Duration drainTimeout,
            int maxInFlight, int metricsPort, boolean foreground, List<String> serviceArgs) {
        this(socket, pidFile, logFile, requestTimeout, drainTimeout, maxInFlight, metricsPort, foreground, serviceArgs, false, true);
    }

    /** Link deletion deferred (the default). */
    public DaemonConfig(Path socket, Path pidFile, Path logFile, Duration requestTimeout, Duration drainTimeout,
            int maxInFlight, int metricsPort, boolean foreground, List<String> serviceArgs, boolean logPhases) {
        this(socket, pidFile, logFile, requestTimeout, drainTimeout, maxInFlight, metricsPort, foreground, serviceArgs, logPhases, true);
    }

    public static final Path DEFAULT_SOCKET = Path.of("/run/jcni/jcnid.sock");
    public static final Path DEFAULT_BACKGROUND_LOG = Path.of("/var/log/jcnid.log");

    public static final String USAGE = """
            usage: jcnid start [--foreground] [options]   run the daemon (detached unless --foreground)
                   jcnid stop [options]                   SIGTERM the daemon and wait for it to exit
                   jcnid status [options]                 health and counters; exit 0 running, 3 not running
                   jcnid metrics [options]                print the Prometheus metrics
            options:
              --socket PATH            unix socket (default /run/jcni/jcnid.sock)
              --pid-file PATH          pid file (default: jcnid.pid next to the socket)
              --log-file PATH          request log (default: stderr; /var/log/jcnid.log when detached)
              --request-timeout DUR    per-request limit, answered with CNI error 11 (default 60; seconds,
                                       or with a unit: 1.5s, 500ms, 2m)
              --drain-timeout DUR      how long shutdown waits for requests in flight (default 10)
              --max-in-flight N        concurrent requests before declining (default 256)
              --metrics-port PORT      also serve /metrics and /healthz on 127.0.0.1:PORT (default off)
              --log-phases             log where each request's time went (queue, parse, netns, plugin,
                                       ipam, nft, link_delete, result; ms); the sums are always in the metrics
              --delete-links-now       bridge and bandwidth DEL delete their veth/ifb before answering, as the
                                       reference plugins do. Default: DEL only retires them (down, no addresses,
                                       renamed) and one request deletes them all right after (--defer-link-deletion)
              --overlay [flags]        also run the overlay agent, when jcni-overlay is installed
                                       (flanneld's flags; see overlay/README.md)
              --docker-driver NAME     also serve Docker's network + IPAM driver NAME, when jcni-docker is installed
                                       (--docker-plugin-dir DIR, --docker-state-dir DIR; see docker/README.md)
              --dhcp                   also keep the leases of the dhcp IPAM plugin (--dhcp-socket PATH,
                                       default /run/jcni/dhcp.sock; --dhcp-state-dir DIR, default /var/lib/cni/jcni/dhcp)
            """;

    public static DaemonConfig defaults() {
        return new DaemonConfig(DEFAULT_SOCKET, null, null, Duration.ofSeconds(60), Duration.ofSeconds(10), 256, 0, false, List.of())
                .withPidDefault();
    }

    private DaemonConfig withPidDefault() {
        if (pidFile != null) return this;
        Path dir = socket.toAbsolutePath().getParent();
        return new DaemonConfig(socket, dir.resolve("jcnid.pid"), logFile, requestTimeout, drainTimeout, maxInFlight,
                metricsPort, foreground, serviceArgs, logPhases, deferLinkDeletion);
    }

    /** Parses flags; throws IllegalArgumentException with a message fit for the user. */
    public static DaemonConfig parse(List<String> args) {
        Path socket = DEFAULT_SOCKET, pid = null, log = null;
        Duration timeout = Duration.ofSeconds(60), drain = Duration.ofSeconds(10);
        int max = 256, port = 0;
        boolean fg = false, phases = false, defer = true;
        List<String> services = new ArrayList<>();
        Flags f = new Flags(args);
        while (f.next()) {
            switch (f.name()) {
                case "--foreground" -> fg = f.switchValue();
                case "--log-phases" -> phases = f.switchValue();
                case "--defer-link-deletion" -> defer = f.switchValue(); // deferral is the default now; the flag is still accepted
                case "--delete-links-now" -> defer = !f.switchValue();
                case "--socket" -> socket = f.path();
                case "--pid-file" -> pid = f.path();
                case "--log-file" -> log = f.path();
                case "--request-timeout" -> timeout = f.duration(MIN_TIMEOUT, MAX_TIMEOUT);
                case "--drain-timeout" -> drain = f.duration(MIN_TIMEOUT, MAX_TIMEOUT);
                case "--max-in-flight" -> max = f.integer(1, 1 << 16);
                case "--metrics-port" -> port = f.integer(0, 65535);
                default -> serviceFlag(f, services);
            }
        }
        return new DaemonConfig(socket, pid, log, timeout, drain, max, port, fg, List.copyOf(services), phases, defer).withPidDefault();
    }

    /** The flags that reproduce this configuration (for the detached child). */
    public List<String> toArgs() {
        List<String> a = new ArrayList<>(List.of("--socket", socket.toString(), "--pid-file", pidFile.toString(),
                "--request-timeout", millisAsSeconds(requestTimeout), "--drain-timeout", millisAsSeconds(drainTimeout),
                "--max-in-flight", Integer.toString(maxInFlight), "--metrics-port", Integer.toString(metricsPort)));
        if (logFile != null) a.addAll(List.of("--log-file", logFile.toString()));
        if (logPhases) a.add("--log-phases");
        if (!deferLinkDeletion) a.add("--delete-links-now");
        a.addAll(serviceArgs);
        return a;
    }

    private static String millisAsSeconds(Duration d) {
        return Double.toString(d.toMillis() / 1000.0);
    }

    private static final Duration MIN_TIMEOUT = Duration.ofMillis(1);
    private static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    /** A flag of a {@link DaemonService}, passed on as {@code --flag value} or {@code --flag}. */
    private static void serviceFlag(Flags f, List<String> out) {
        int arity = f.name().startsWith("--") ? DaemonServices.arity(f.name()) : -1;
        if (arity < 0) throw f.unknown();
        if (arity == 1) {
            out.add(f.name());
            out.add(f.value());
        } else if (f.switchValue()) {
            out.add(f.name());
        }
    }
}
