package io.jcni.daemon;

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
              --request-timeout SECS   per-request limit, answered with CNI error 11 (default 60)
              --drain-timeout SECS     how long shutdown waits for requests in flight (default 10)
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
        List<String> rest = new ArrayList<>(args);
        while (!rest.isEmpty()) {
            String a = rest.removeFirst();
            switch (a) {
                case "--foreground" -> fg = true;
                case "--log-phases" -> phases = true;
                case "--defer-link-deletion" -> defer = true; // the default since issue 13; still accepted
                case "--delete-links-now" -> defer = false;
                case "--socket" -> socket = Path.of(value(a, rest));
                case "--pid-file" -> pid = Path.of(value(a, rest));
                case "--log-file" -> log = Path.of(value(a, rest));
                case "--request-timeout" -> timeout = seconds(a, value(a, rest));
                case "--drain-timeout" -> drain = seconds(a, value(a, rest));
                case "--max-in-flight" -> max = number(a, value(a, rest), 1, 1 << 16);
                case "--metrics-port" -> port = number(a, value(a, rest), 0, 65535);
                default -> serviceFlag(a, rest, services);
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

    /** A flag of a {@link DaemonService} ({@code --flag value} or {@code --flag=value}, as flanneld's Go flags). */
    private static void serviceFlag(String a, List<String> rest, List<String> out) {
        int eq = a.indexOf('=');
        String flag = eq > 0 ? a.substring(0, eq) : a;
        int arity = a.startsWith("--") ? DaemonServices.arity(flag) : -1;
        if (arity < 0) throw new IllegalArgumentException("unknown option " + a);
        String v = eq > 0 ? a.substring(eq + 1) : null;
        if (arity == 1) {
            out.add(flag);
            out.add(v != null ? v : value(flag, rest));
        } else if (v == null || v.equals("true")) {
            out.add(flag);
        } else if (!v.equals("false")) {
            throw new IllegalArgumentException(flag + " is a switch: no value, =true or =false");
        }
    }

    private static String value(String flag, List<String> rest) {
        if (rest.isEmpty()) throw new IllegalArgumentException(flag + " needs a value");
        return rest.removeFirst();
    }

    private static Duration seconds(String flag, String v) {
        try {
            double d = Double.parseDouble(v);
            if (!(d > 0 && d <= 86400)) throw new NumberFormatException();
            return Duration.ofMillis(Math.max(1, Math.round(d * 1000)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": not a number of seconds in (0, 86400]: " + v);
        }
    }

    private static int number(String flag, String v, int min, int max) {
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) throw new NumberFormatException();
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + ": not a number in [" + min + ", " + max + "]: " + v);
        }
    }
}
