package io.jcni.daemon;

import io.jcni.linux.Netns;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Phases;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.Skel;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs EXEC requests: the plugin in-process through {@link Skel#run}, exactly as the standalone
 * plugin would, on a pooled platform thread, in the caller's network namespace, one request per
 * attachment at a time ({@link AttachmentLocks}), answered "try again later" (CNI error 11) past
 * the request timeout.
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
final class RequestRunner {

    /** The connection a request came on: what the runner tells its client. */
    interface Exchange {
        /** 'F': nothing ran, the client runs the standalone plugin. */
        void decline(String why);

        /** 'A': from here the plugin may run. */
        void accept() throws IOException;

        /** The result after 'A'. */
        void answer(Protocol.Result result) throws IOException;
    }

    private final DaemonConfig cfg;
    private final Function<String, Supplier<Plugin>> registry;
    private final Metrics metrics;
    private final DaemonLog log;
    private final DeferredWork deferred;
    private final BooleanSupplier shuttingDown;
    private final AttachmentLocks locks = new AttachmentLocks();
    private final ExecutorService workers = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("jcnid-plugin-", 0).daemon().factory());
    /** Plugin runs not finished yet, including those whose client already got "timed out". */
    private final AtomicInteger pluginRuns = new AtomicInteger();
    /** Attachments whose last run outlived the timeout and still runs: their next requests fail at once. */
    private final Map<String, AtomicBoolean> overdue = new ConcurrentHashMap<>();

    RequestRunner(DaemonConfig cfg, Function<String, Supplier<Plugin>> registry, Metrics metrics, DaemonLog log,
            DeferredWork deferred, BooleanSupplier shuttingDown) {
        this.cfg = cfg;
        this.registry = registry;
        this.metrics = metrics;
        this.log = log;
        this.deferred = deferred;
        this.shuttingDown = shuttingDown;
    }

    /** Plugin runs not finished, including any past their timeout. */
    int pluginRuns() {
        return pluginRuns.get();
    }

    void shutdown() {
        workers.shutdown();
    }

    /** Runs one EXEC request and answers it on x (or declines it). */
    void run(Protocol.Exec ex, Exchange x) throws IOException {
        Supplier<Plugin> plugin = registry.apply(ex.type());
        if (plugin == null) {
            x.decline("unknown plugin type " + ex.type());
            return;
        }
        if (shuttingDown.getAsBoolean()) {
            x.decline("shutting down");
            return;
        }
        ExecRequest r = ExecRequest.of(ex);
        if (pluginRuns.get() >= cfg.maxInFlight()) {
            x.decline("busy: " + pluginRuns.get() + " plugin runs not finished");
            return;
        }
        // From here the plugin may run: a client that loses us after this must not blindly re-run an ADD.
        x.accept();
        long t0 = System.nanoTime();
        Phases phases = new Phases();
        phases.enter(Phases.Phase.QUEUE);
        if (behindOverdueRun(r.lockKey())) {
            // Waiting behind a run that is already overdue would only time out too, holding a thread.
            Skel.Outcome out = r.error(new CniException(ErrorCode.TRY_AGAIN_LATER,
                    "jcnid: an earlier request for this attachment is still running",
                    "it did not finish within " + cfg.requestTimeout().toMillis() + " ms; try again later"));
            finish(x, r, t0, out, false, new byte[0], phases);
            return;
        }
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        PrintStream pluginLog = new PrintStream(stderr, true, StandardCharsets.UTF_8);
        AtomicBoolean finished = new AtomicBoolean(); // a cancelled Future is "done" while its thread still runs
        Future<Skel.Outcome> f = submit(plugin, r, pluginLog, phases, finished);
        Skel.Outcome out;
        boolean timedOut = false;
        try {
            out = f.get(cfg.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            markOverdue(r.lockKey(), finished);
            timedOut = true;
            out = r.error(new CniException(ErrorCode.TRY_AGAIN_LATER, "jcnid: request timed out",
                    "the " + r.type() + " plugin did not finish " + r.command() + " within " + cfg.requestTimeout().toMillis()
                            + " ms; it may still complete, and later requests for this attachment wait for it", e));
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            c.printStackTrace(pluginLog);
            out = r.error(new CniException(ErrorCode.INTERNAL, "internal error", String.valueOf(c), c));
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            out = r.error(new CniException(ErrorCode.TRY_AGAIN_LATER, "jcnid: interrupted", "", e));
        }
        // A run that timed out still owns its clock: its phases are left out rather than read racily.
        finish(x, r, t0, out, timedOut, stderr.toByteArray(), timedOut ? null : phases);
    }

    /** Whether an earlier run for this attachment is past its timeout and still running. */
    private boolean behindOverdueRun(String lockKey) {
        AtomicBoolean stuck = lockKey == null ? null : overdue.get(lockKey);
        if (stuck != null && stuck.get()) {
            overdue.remove(lockKey, stuck);
            return false;
        }
        return stuck != null;
    }

    private void markOverdue(String lockKey, AtomicBoolean finished) {
        if (lockKey != null && !finished.get()) {
            overdue.put(lockKey, finished);
            if (finished.get()) overdue.remove(lockKey, finished); // it ended meanwhile
        }
    }

    private Future<Skel.Outcome> submit(Supplier<Plugin> plugin, ExecRequest r, PrintStream pluginLog, Phases phases,
            AtomicBoolean finished) {
        String lockKey = r.lockKey();
        pluginRuns.incrementAndGet();
        try {
            return workers.submit(() -> {
                try {
                    AttachmentLocks.Entry held = lockKey == null ? null : locks.lock(lockKey);
                    try {
                        // Entering the caller's namespace (a thread hop) and coming back are NETNS;
                        // the skeleton marks its own phases in between and restores this one.
                        phases.enter(Phases.Phase.NETNS);
                        return inCallersNetns(r.callerPid(), () -> Skel.run(plugin, r.env(), r.stdin(),
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
        } catch (RuntimeException e) { // RejectedExecutionException (shut down)
            pluginRuns.decrementAndGet();
            throw e;
        }
    }

    private void finish(Exchange x, ExecRequest r, long t0, Skel.Outcome out, boolean timedOut, byte[] stderr, Phases phases)
            throws IOException {
        // The thread hand-back to this connection counts as RESULT, with the encoding of the answer.
        if (phases != null) phases.enter(Phases.Phase.RESULT);
        long nanos = System.nanoTime() - t0;
        if (phases != null) phases.stop();
        metrics.record(r.type(), r.command(), nanos, out.exitCode(), timedOut, phases);
        log.line(String.format("jcnid plugin=%s cmd=%s container=%s ifname=%s dur_ms=%.3f exit=%d%s%s", DaemonLog.quote(r.type()),
                r.command(), DaemonLog.quote(r.containerId()), DaemonLog.quote(r.ifname()),
                nanos / 1e6, out.exitCode(), timedOut ? " timeout=true" : "",
                cfg.logPhases() && phases != null ? " phases=" + phases.summary() : ""));
        x.answer(new Protocol.Result(out.exitCode(), out.stdout().getBytes(StandardCharsets.UTF_8), stderr));
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
