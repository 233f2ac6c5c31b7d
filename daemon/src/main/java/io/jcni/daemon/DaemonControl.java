package io.jcni.daemon;

import io.jcni.plugins.PluginRegistry;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starting, stopping and asking after jcnid. The CLI's {@code jcni daemon ...} calls {@link #run};
 * the typed methods are there for anything else.
 */
public final class DaemonControl {
    private DaemonControl() {}

    /** Exit status of {@code status} when no daemon answers (LSB "program is not running"). */
    public static final int NOT_RUNNING = 3;
    /**
     * Exit status of {@code status} when the daemon answers but a hosted service it was started with
     * does not serve: its start failed, or it stalled. LSB gives status no code for a degraded
     * program and leaves 150-199 to the application; 1 and 4 mean "dead" and "unknown" there.
     */
    public static final int SERVICE_DOWN = 150;

    /** What {@link #status} found. */
    public record Status(boolean running, long pid, String health) {
        /** The "NAME failed: WHY" and "NAME stalled: WHY" of each hosted service that does not serve. */
        public List<String> servicesDown() {
            return DaemonControl.servicesDown(health);
        }
    }

    /** {@code start|stop|status|metrics [options]}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("-h") || args[0].equals("--help")) {
            (args.length == 0 ? err : out).print(DaemonConfig.USAGE);
            return args.length == 0 ? 2 : 0;
        }
        DaemonConfig cfg;
        try {
            cfg = DaemonConfig.parse(Arrays.asList(args).subList(1, args.length));
        } catch (IllegalArgumentException e) {
            err.println("jcnid: " + e.getMessage());
            err.print(DaemonConfig.USAGE);
            return 2;
        }
        try {
            return switch (args[0]) {
                case "start" -> cfg.foreground() ? runForeground(cfg) : startDetached(cfg, out, err);
                case "stop" -> stop(cfg, out, err);
                case "status" -> {
                    Status s = status(cfg);
                    if (!s.running()) {
                        out.println("jcnid is not running (no answer on " + cfg.socket() + ")");
                        yield NOT_RUNNING;
                    }
                    out.print(s.health());
                    List<String> down = s.servicesDown();
                    for (String d : down) err.println("jcnid: service " + d);
                    yield down.isEmpty() ? 0 : SERVICE_DOWN;
                }
                case "metrics" -> {
                    out.print(JcnidClient.metrics(cfg.socket()));
                    yield 0;
                }
                default -> {
                    err.println("jcnid: unknown command " + args[0]);
                    err.print(DaemonConfig.USAGE);
                    yield 2;
                }
            };
        } catch (IOException e) {
            err.println("jcnid: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /**
     * Runs the daemon in this process until SIGTERM/SIGINT; returns 0 after a graceful stop. A
     * hosted service that fails to start is logged and shown in the health answer; the plugin
     * socket and the other services keep running (a restart would fail the same way).
     */
    public static int runForeground(DaemonConfig cfg) throws IOException, InterruptedException {
        PrintStream log = cfg.logFile() == null ? System.err
                : new PrintStream(new FileOutputStream(cfg.logFile().toFile(), true), true, StandardCharsets.UTF_8);
        // The daemon's stdout is not a CNI channel, but nothing a library prints should pretend to be one.
        System.setOut(log);
        HostedServices services = HostedServices.of(DaemonServices.available(), cfg.serviceArgs());
        JcnidServer server = JcnidServer.start(cfg, PluginRegistry::lookup, log, PeerCredentials.root(), services);
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdown, "jcnid-shutdown"));
        services.startAll(log);
        server.awaitTermination();
        return 0;
    }

    /** Health of the daemon on cfg's socket. */
    public static Status status(DaemonConfig cfg) {
        try {
            String h = JcnidClient.health(cfg.socket());
            long pid = -1;
            for (String line : h.split("\n")) {
                if (line.startsWith("pid ")) pid = Long.parseLong(line.substring(4).trim());
            }
            return new Status(true, pid, h);
        } catch (IOException | RuntimeException e) {
            return new Status(false, -1, "");
        }
    }

    /**
     * Starts a detached daemon (its own session, stdin /dev/null, output appended to the log file)
     * and waits until it answers; returns 0, or 1 with the reason on err.
     *
     * <p>The daemon is started by a shell that exits at once and reports its pid: a JVM that is
     * the parent of a running process keeps a thread in waitpid(2), and a JVM exits only after
     * waiting up to 300 ms for its threads in native code to stop, so {@code jcnid start} took
     * ~450 ms where the daemon answered after ~150 (docs/performance.md).
     */
    public static int startDetached(DaemonConfig cfg, PrintStream out, PrintStream err) throws IOException, InterruptedException {
        Status s = status(cfg);
        if (s.running()) {
            out.println("jcnid is already running (pid " + s.pid() + ", socket " + cfg.socket() + ")");
            return 0;
        }
        Path logFile = cfg.logFile() != null ? cfg.logFile() : DaemonConfig.DEFAULT_BACKGROUND_LOG;
        // The shell below would fail on the log redirection after printing the pid: say why first.
        String cannotLog = unwritable(logFile);
        if (cannotLog != null) {
            err.println("jcnid: could not start the daemon: cannot write its log file " + logFile + " (" + cannotLog + ")"
                    + (cannotLog.contains("ermission") ? "; run as root (jcnid needs CAP_NET_ADMIN), or give --log-file and --socket"
                    + " in directories you can write" : ""));
            return 1;
        }
        long logStart = Files.size(logFile);
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c",
                (Files.isExecutable(Path.of("/usr/bin/setsid")) ? "/usr/bin/setsid " : "") + "\"$@\" </dev/null >>\"$0\" 2>&1 & echo $!",
                logFile.toString()));
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(childJvmFlags(ManagementFactory.getRuntimeMXBean().getInputArguments()));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Jcnid.class.getName(), "start", "--foreground"));
        // The child logs to its stderr, which is the log file.
        List<String> childArgs = new ArrayList<>(cfg.toArgs());
        int i = childArgs.indexOf("--log-file");
        if (i >= 0) childArgs.subList(i, i + 2).clear();
        cmd.addAll(childArgs);
        Process sh = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String shOut = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        String pid = shOut.lines().findFirst().orElse("");
        if (sh.waitFor() != 0 || !pid.matches("[0-9]+") || !shOut.equals(pid)) {
            // Only the pid on a line of its own means started; anything else is the shell's complaint.
            String why = shOut.lines().filter(l -> !l.matches("[0-9]+")).reduce((a, b) -> a + "; " + b).orElse("the shell exited with " + sh.exitValue());
            err.println("jcnid: could not start the daemon: " + why);
            return 1;
        }
        Optional<ProcessHandle> daemon = ProcessHandle.of(Long.parseLong(pid));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            s = status(cfg);
            // Started means answering with every hosted service's start over, failed or not.
            if (s.running() && !s.health().contains("\nservices starting\n")) return reportStarted(cfg, s, logFile, out, err);
            if (daemon.isEmpty() || !daemon.get().isAlive()) {
                String why = lastLines(logFile, logStart, 5);
                err.println("jcnid: the daemon exited" + (why.isEmpty() ? "" : ": " + why) + "; see " + logFile);
                return 1;
            }
            Thread.sleep(10);
        }
        err.println("jcnid: the daemon did not " + (s.running() ? "finish starting its services" : "answer on " + cfg.socket())
                + " within 30 s; see " + logFile);
        return 1;
    }

    /** 0 when every hosted service runs; 1, naming each service that failed and why, when not. */
    private static int reportStarted(DaemonConfig cfg, Status s, Path logFile, PrintStream out, PrintStream err) {
        out.println("jcnid started (pid " + s.pid() + ", socket " + cfg.socket() + ", log " + logFile + ")");
        List<String> failed = failedServices(s.health());
        for (String f : failed) err.println("jcnid: service " + f);
        if (failed.isEmpty()) return 0;
        err.println("jcnid: the plugin fast path" + (s.health().contains(" running\n") ? " and the other services are" : " is")
                + " running; fix the cause and restart jcnid (jcnid status shows each service)");
        return 1;
    }

    /** The "NAME failed: WHY" of each failed service in a health answer. */
    static List<String> failedServices(String health) {
        return serviceLines(health, List.of(" failed: "));
    }

    /** The "NAME failed: WHY" and "NAME stalled: WHY" of each service in a health answer that does not serve. */
    static List<String> servicesDown(String health) {
        return serviceLines(health, List.of(" failed: ", " stalled: "));
    }

    private static List<String> serviceLines(String health, List<String> states) {
        List<String> out = new ArrayList<>();
        for (String line : health.split("\n")) {
            if (!line.startsWith("service ")) continue;
            String rest = line.substring("service ".length());
            // The state follows the name, which has no space (the enable flag without "--").
            int space = rest.indexOf(' ');
            if (space > 0 && states.stream().anyMatch(st -> rest.startsWith(st, space))) out.add(rest);
        }
        return out;
    }

    /** The launchers' heap limit and OOM policy (io.jcni.common.Launcher), for a jcnid started from a JVM without them. */
    static final String HEAP_LIMIT = io.jcni.common.Launcher.DAEMON_HEAP_LIMIT;
    static final String EXIT_ON_OOM = io.jcni.common.Launcher.EXIT_ON_OOM;

    /**
     * The detached daemon's JVM flags: this JVM's, plus the heap limit and the exit on
     * OutOfMemoryError where they are missing, and the daemon's compile thresholds instead of a
     * plugin's ({@code jcni daemon start} runs in the jcni command's JVM, whose flags are made for
     * short runs: with them jcnid would compile ten times later than by default, not sooner).
     */
    static List<String> childJvmFlags(List<String> own) {
        List<String> flags = new ArrayList<>(own);
        if (flags.remove(io.jcni.common.Launcher.PLUGIN_COMPILE_THRESHOLD) && flags.stream().noneMatch(f -> f.startsWith("-XX:CompileCommand"))) {
            flags.addAll(io.jcni.common.Launcher.DAEMON_COMPILE_SOONER);
        }
        if (flags.stream().noneMatch(f -> f.startsWith("-Xmx") || f.startsWith("-XX:MaxHeapSize="))) flags.add(HEAP_LIMIT);
        if (flags.stream().noneMatch(f -> f.contains("OutOfMemoryError"))) flags.add(EXIT_ON_OOM);
        return flags;
    }

    /** Why {@code logFile} cannot be appended to (creating it if needed), or null when it can. */
    static String unwritable(Path logFile) {
        try {
            Path dir = logFile.toAbsolutePath().getParent();
            if (dir != null) Files.createDirectories(dir);
            try (FileOutputStream o = new FileOutputStream(logFile.toFile(), true)) {
                return null;
            }
        } catch (IOException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("Permission denied") || e instanceof java.nio.file.AccessDeniedException ? "permission denied" : m;
        }
    }

    /** The last {@code n} lines the daemon wrote to its log since {@code from}, joined: its own reason for exiting. */
    static String lastLines(Path logFile, long from, int n) {
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(logFile.toFile(), "r")) {
            long start = Math.max(from, f.length() - 4096);
            byte[] b = new byte[(int) Math.max(0, f.length() - start)];
            f.seek(start);
            f.readFully(b);
            List<String> lines = new String(b, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    /** SIGTERMs the daemon named by the pid file and waits for it to finish draining. */
    public static int stop(DaemonConfig cfg, PrintStream out, PrintStream err) throws IOException, InterruptedException {
        Path pidFile = cfg.pidFile();
        Optional<ProcessHandle> h = Optional.empty();
        if (Files.isRegularFile(pidFile)) {
            try {
                h = ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim()));
            } catch (NumberFormatException e) {
                err.println("jcnid: ignoring unreadable pid file " + pidFile);
            }
        }
        if (h.isEmpty()) {
            Status s = status(cfg); // no pid file, but maybe an answering daemon
            if (s.running() && s.pid() > 0) h = ProcessHandle.of(s.pid());
        }
        if (h.isEmpty() || !isJcnid(h.get())) {
            if (Files.isRegularFile(pidFile)) Files.delete(pidFile); // stale: the pid is gone or reused
            out.println("jcnid is not running");
            return 0;
        }
        ProcessHandle ph = h.get();
        ph.destroy(); // SIGTERM: the shutdown hook drains
        Duration wait = cfg.drainTimeout().plusSeconds(5);
        try {
            ph.onExit().get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            err.println("jcnid: pid " + ph.pid() + " did not exit within " + wait.toSeconds() + " s after SIGTERM");
            return 1;
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
        out.println("jcnid stopped (pid " + ph.pid() + ")");
        return 0;
    }

    /** Whether a process is a jcnid (so a stale pid file never gets an unrelated process killed). */
    static boolean isJcnid(ProcessHandle h) {
        if (!h.isAlive()) return false;
        return h.info().commandLine().map(c -> c.contains(Jcnid.class.getName())).orElse(false)
                || h.info().arguments().map(a -> Arrays.asList(a).contains(Jcnid.class.getName())).orElse(false);
    }
}
