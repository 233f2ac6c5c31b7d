package io.jcni.daemon;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@link DaemonService}s one jcnid hosts, each isolated from the others and from the plugin
 * socket: a service whose start throws (a damaged state file, a bad flag, a port in use) is
 * recorded as failed, with the cause, and everything else goes on; a service whose status does
 * not answer is reported stalled instead of holding up {@code jcnid status}.
 *
 * <p>Their lines in the health answer: {@code services starting} until every start has returned,
 * then {@code services ok N} or {@code services failed N of M}; per service
 * {@code service NAME running} or {@code service NAME stalled: WHY} (its own
 * {@link DaemonService.Running#stalled}, or a status that did not answer), each followed by the
 * service's own lines, or {@code service NAME failed: WHY}. {@code jcnid start} waits for the start to end and reports failures.
 *
 * <p>An OutOfMemoryError is not caught here: jcnid is crash-only on it (daemon/README.md).
 */
final class HostedServices {
    /** How long a service's status may take before it is reported stalled. */
    static final Duration STATUS_TIMEOUT = Duration.ofSeconds(1);

    enum State { STARTING, RUNNING, FAILED }

    /** One service: its name (the enable flag without "--"), its state and, once running, its handle. */
    static final class Hosted {
        final String name;
        volatile State state = State.STARTING;
        volatile String why = "";
        volatile DaemonService.Running running;
        /** The status call still under way; a stalled service gets no second thread. */
        private Future<Answer> statusCall;
        private long statusCallStarted;

        Hosted(String name) {
            this.name = name;
        }
    }

    private final List<DaemonService> enabled;
    private final List<String> args;
    private final List<Hosted> hosted = new CopyOnWriteArrayList<>();
    private final ExecutorService statusThreads = Executors.newCachedThreadPool(
            Thread.ofPlatform().name("jcnid-service-status-", 0).daemon().factory());
    private volatile boolean starting;
    private volatile boolean stopped;

    private HostedServices(List<DaemonService> enabled, List<String> args) {
        this.enabled = enabled;
        this.args = args;
        for (DaemonService s : enabled) hosted.add(new Hosted(name(s)));
        this.starting = !enabled.isEmpty();
    }

    /** The services that args enables, among those available, declared as starting. */
    static HostedServices of(List<DaemonService> available, List<String> args) {
        List<DaemonService> on = new ArrayList<>();
        for (DaemonService s : available) if (args.contains(s.enableFlag())) on.add(s);
        return new HostedServices(on, List.copyOf(args));
    }

    static HostedServices none() {
        return new HostedServices(List.of(), List.of());
    }

    static String name(DaemonService s) {
        return s.enableFlag().replaceFirst("^-+", "");
    }

    /**
     * Starts every declared service with its own flags, each on its own thread, and returns when all
     * starts have returned; never throws for a service's failure. Side by side, not in turn: a
     * service whose start waits (the overlay agent on etcd, the Docker driver's state) holds no
     * other back, and the Docker driver's socket serves as soon as its own start is done.
     */
    void startAll(PrintStream log) {
        try {
            List<Thread> starts = new ArrayList<>();
            for (int i = 0; i < enabled.size(); i++) {
                DaemonService s = enabled.get(i);
                Hosted h = hosted.get(i);
                starts.add(Thread.ofPlatform().name("jcnid-start-" + h.name).start(() -> start(s, h, log)));
            }
            for (Thread t : starts) t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // jcnid is stopping; stop() closes whatever still starts
        } finally {
            starting = false;
        }
    }

    private void start(DaemonService s, Hosted h, PrintStream log) {
        if (stopped) {
            fail(h, "jcnid stopped before the service started", log);
            return;
        }
        try {
            DaemonService.Running r = s.start(DaemonServices.argsOf(s, args), log);
            h.running = r;
            h.state = State.RUNNING;
            if (stopped) close(h, log); // a stop that came while it started missed it
        } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
            fail(h, causeOf(e), log);
        }
    }

    private static void fail(Hosted h, String why, PrintStream log) {
        h.why = why;
        h.state = State.FAILED;
        log.println(java.time.Instant.now() + " jcnid service=" + h.name + " failed=" + DaemonLog.quote(why));
    }

    /** The cause on one line: its message, or its type when it has none. */
    static String causeOf(Throwable e) {
        String m = e.getMessage() == null || e.getMessage().isBlank() ? e.getClass().getName() : e.getMessage();
        return m.replaceAll("\\s*\\R\\s*", " ").strip();
    }

    /** A service started elsewhere (tests, embedders): hosted as running, its status lines as they are. */
    void adopt(DaemonService.Running r) {
        Hosted h = new Hosted(null);
        h.running = r;
        h.state = State.RUNNING;
        hosted.add(h);
    }

    /** Services whose start failed, as "NAME failed: WHY" (their health line without "service "). */
    List<String> failures() {
        List<String> out = new ArrayList<>();
        for (Hosted h : hosted) if (h.state == State.FAILED) out.add(h.name + " failed: " + h.why);
        return out;
    }

    /** The health lines (see the class comment). */
    String status() {
        StringBuilder b = new StringBuilder();
        long named = hosted.stream().filter(h -> h.name != null).count();
        long failed = hosted.stream().filter(h -> h.state == State.FAILED).count();
        if (starting) b.append("services starting\n");
        else if (named > 0) b.append(failed > 0 ? "services failed " + failed + " of " + named + "\n" : "services ok " + named + "\n");
        for (Hosted h : hosted) {
            switch (h.state) {
                case STARTING -> b.append("service ").append(h.name).append(" starting\n");
                case FAILED -> b.append("service ").append(h.name).append(" failed: ").append(h.why).append('\n');
                case RUNNING -> runningStatus(h, b);
            }
        }
        return b.toString();
    }

    /** What a running service says of itself: why it stalled (null while it serves) and its own lines. */
    private record Answer(String stalled, String lines) {}

    private void runningStatus(Hosted h, StringBuilder b) {
        Answer own = ownStatus(h);
        if (h.name != null) {
            b.append("service ").append(h.name);
            if (own == null) b.append(" stalled: its status did not answer within ").append(STATUS_TIMEOUT.toSeconds()).append(" s\n");
            else if (own.stalled() != null) b.append(" stalled: ").append(causeOf(new Exception(own.stalled()))).append('\n');
            else b.append(" running\n");
        }
        if (own != null) b.append(own.lines());
    }

    /** The service's own word; null when it did not answer within {@link #STATUS_TIMEOUT}. */
    private Answer ownStatus(Hosted h) {
        Future<Answer> call;
        long waitNanos;
        synchronized (h) {
            if (h.statusCall == null || h.statusCall.isDone()) {
                DaemonService.Running r = h.running;
                h.statusCall = statusThreads.submit(() -> new Answer(r.stalled(), r.status()));
                h.statusCallStarted = System.nanoTime();
            }
            call = h.statusCall;
            // A call already stalled is not waited for again: one stalled service costs status 1 s once, not each time.
            waitNanos = STATUS_TIMEOUT.toNanos() - (System.nanoTime() - h.statusCallStarted);
        }
        try {
            return call.get(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            return new Answer(null, "status_error " + DaemonLog.quote(causeOf(e.getCause())) + "\n");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Closes the running services, last started first; each failure is logged and the rest go on. */
    void stop(PrintStream log) {
        stopped = true;
        for (Hosted h : hosted.reversed()) if (h.state == State.RUNNING) close(h, log);
        statusThreads.shutdownNow();
    }

    private static void close(Hosted h, PrintStream log) {
        try {
            h.running.close();
        } catch (Exception e) {
            log.println("jcnid: stopping the service " + (h.name == null ? "" : h.name + " ") + "failed: " + e);
        }
    }
}
