package io.jcni.daemon;

import io.jcni.plugins.skel.Phases;
import java.math.BigDecimal;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/** The daemon's counters, rendered in the Prometheus text exposition format (version 0.0.4). */
public final class Metrics {

    /** Upper bounds of the latency histogram, in seconds. */
    static final double[] BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

    /** Per plugin and command: requests, errors (non-zero exit), timeouts and the latency histogram. */
    static final class Series {
        final AtomicLong requests = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong timeouts = new AtomicLong();
        final AtomicLongArray buckets = new AtomicLongArray(BUCKETS.length);
        final AtomicLong sumNanos = new AtomicLong();
        final AtomicLongArray phaseNanos = new AtomicLongArray(PHASES.length);
    }

    private static final Phases.Phase[] PHASES = Phases.Phase.values();

    private final Map<String, Series> series = new ConcurrentHashMap<>();
    final AtomicLong declined = new AtomicLong();
    final AtomicLong protocolErrors = new AtomicLong();
    final AtomicLong rejectedPeers = new AtomicLong();
    final AtomicInteger inFlight = new AtomicInteger();
    /** Connections closed because the client did not send its request, or take its answer, in time. */
    final AtomicLong deadlineDrops = new AtomicLong();
    /** Requests declined, or answers dropped, because the I/O memory budget was used up. */
    final AtomicLong overBudget = new AtomicLong();
    private final long startMillis = System.currentTimeMillis();

    /** Records one finished plugin request. */
    public void record(String plugin, String command, long nanos, int exitCode, boolean timedOut) {
        record(plugin, command, nanos, exitCode, timedOut, null);
    }

    /** Records one finished plugin request and, when given, where its time went. */
    public void record(String plugin, String command, long nanos, int exitCode, boolean timedOut, Phases phases) {
        Series s = series.computeIfAbsent(plugin + "\0" + command, k -> new Series());
        if (phases != null) {
            for (Phases.Phase p : PHASES) {
                long n = phases.nanos(p);
                if (n != 0) s.phaseNanos.addAndGet(p.ordinal(), n);
            }
        }
        s.requests.incrementAndGet();
        if (exitCode != 0) s.errors.incrementAndGet();
        if (timedOut) s.timeouts.incrementAndGet();
        s.sumNanos.addAndGet(nanos);
        double secs = nanos / 1e9;
        for (int i = 0; i < BUCKETS.length; i++) {
            if (secs <= BUCKETS[i]) {
                s.buckets.incrementAndGet(i);
                break;
            }
        }
    }

    public long startMillis() {
        return startMillis;
    }

    public long totalRequests() {
        return series.values().stream().mapToLong(s -> s.requests.get()).sum();
    }

    /** The whole exposition. */
    public String render() {
        Map<String, Series> sorted = new TreeMap<>(series);
        StringBuilder b = new StringBuilder(4096);
        gauge(b, "jcnid_up", "1 while the daemon serves requests.", 1);
        gauge(b, "jcnid_start_time_seconds", "When the daemon started, in seconds since the epoch.", startMillis / 1000.0);
        gauge(b, "jcnid_in_flight_requests", "Connections being served now.", inFlight.get());
        counterHead(b, "jcnid_requests_total", "Plugin requests executed, by plugin and command.");
        sorted.forEach((k, s) -> line(b, "jcnid_requests_total", k, null, s.requests.get()));
        counterHead(b, "jcnid_errors_total", "Plugin requests that exited non-zero (including timeouts).");
        sorted.forEach((k, s) -> line(b, "jcnid_errors_total", k, null, s.errors.get()));
        counterHead(b, "jcnid_timeouts_total", "Plugin requests answered with 'try again later' because they exceeded the request timeout.");
        sorted.forEach((k, s) -> line(b, "jcnid_timeouts_total", k, null, s.timeouts.get()));
        b.append("# HELP jcnid_request_duration_seconds Time from a complete request to its answer.\n");
        b.append("# TYPE jcnid_request_duration_seconds histogram\n");
        sorted.forEach((k, s) -> {
            long cumulative = 0;
            for (int i = 0; i < BUCKETS.length; i++) {
                cumulative += s.buckets.get(i);
                line(b, "jcnid_request_duration_seconds_bucket", k, "le=\"" + fmt(BUCKETS[i]) + "\"", cumulative);
            }
            long count = s.requests.get();
            line(b, "jcnid_request_duration_seconds_bucket", k, "le=\"+Inf\"", count);
            b.append("jcnid_request_duration_seconds_sum").append(labels(k, null)).append(' ')
                    .append(fmt(s.sumNanos.get() / 1e9)).append('\n');
            line(b, "jcnid_request_duration_seconds_count", k, null, count);
        });
        counterHead(b, "jcnid_request_phase_seconds_total", "Time requests spent per phase (queue, parse, netns, plugin, ipam, nft, link_delete, result), by plugin and command.");
        sorted.forEach((k, s) -> {
            for (Phases.Phase p : PHASES) {
                b.append("jcnid_request_phase_seconds_total").append(labels(k, "phase=\"" + p.label() + "\"")).append(' ')
                        .append(fmt(s.phaseNanos.get(p.ordinal()) / 1e9)).append('\n');
            }
        });
        counterHead(b, "jcnid_declined_total", "Requests declined so the client runs the standalone plugin (unknown type, busy, shutting down, other protocol version).");
        b.append("jcnid_declined_total ").append(declined.get()).append('\n');
        counterHead(b, "jcnid_protocol_errors_total", "Malformed or truncated requests.");
        b.append("jcnid_protocol_errors_total ").append(protocolErrors.get()).append('\n');
        counterHead(b, "jcnid_rejected_peers_total", "Connections refused because the peer is not root.");
        b.append("jcnid_rejected_peers_total ").append(rejectedPeers.get()).append('\n');
        counterHead(b, "jcnid_deadline_drops_total", "Connections closed because the client did not send its request, or take its answer, within 10 s.");
        b.append("jcnid_deadline_drops_total ").append(deadlineDrops.get()).append('\n');
        counterHead(b, "jcnid_over_budget_total", "Requests declined, or answers dropped, because the memory budget for request bodies and answers was used up.");
        b.append("jcnid_over_budget_total ").append(overBudget.get()).append('\n');
        return b.toString();
    }

    /** The exposition of jcnid's deferred work (retired links being deleted after their DEL's answer). */
    static String deferred(int pending, long done, long failed, long shared) {
        StringBuilder b = new StringBuilder(512);
        gauge(b, "jcnid_deferred_pending", "Work left by answered requests (deleting retired links) not done yet.", pending);
        counterHead(b, "jcnid_deferred_total", "Deferred work done, by result.");
        b.append("jcnid_deferred_total{result=\"ok\"} ").append(done).append('\n');
        b.append("jcnid_deferred_total{result=\"error\"} ").append(failed).append('\n');
        counterHead(b, "jcnid_deferred_shared_total", "Requests whose deferred work joined a task already waiting (e.g. one deletion for many retired links).");
        b.append("jcnid_deferred_shared_total ").append(shared).append('\n');
        return b.toString();
    }

    /** The exposition of the memory budget for request bodies and answers. */
    static String budget(long used, long capacity) {
        StringBuilder b = new StringBuilder(256);
        gauge(b, "jcnid_io_budget_used_bytes", "Bytes of request bodies and answers held now.", (double) used);
        gauge(b, "jcnid_io_budget_bytes", "The most bytes of request bodies and answers held at once.", (double) capacity);
        return b.toString();
    }

    private static void gauge(StringBuilder b, String name, String help, double v) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(" gauge\n");
        b.append(name).append(' ').append(fmt(v)).append('\n');
    }

    private static void counterHead(StringBuilder b, String name, String help) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(" counter\n");
    }

    private static void line(StringBuilder b, String name, String key, String extra, long v) {
        b.append(name).append(labels(key, extra)).append(' ').append(v).append('\n');
    }

    private static String labels(String key, String extra) {
        int z = key.indexOf('\0');
        String l = "{plugin=\"" + escape(key.substring(0, z)) + "\",command=\"" + escape(key.substring(z + 1)) + "\"";
        return extra == null ? l + "}" : l + "," + extra + "}";
    }

    static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    static String fmt(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return Long.toString((long) v);
        return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }
}
