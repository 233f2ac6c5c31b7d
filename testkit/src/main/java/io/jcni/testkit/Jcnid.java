package io.jcni.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The installed jcnid on the installation's own socket (never the node's): started by a test,
 * stopped (or killed by its pid) when the test closes it.
 */
public final class Jcnid implements AutoCloseable {
    private final Installed jcni;

    private Jcnid(Installed jcni) {
        this.jcni = jcni;
    }

    /** Starts a detached jcnid logging to {@code logFile}, with extra options (e.g. --max-in-flight). */
    public static Jcnid start(Installed jcni, Path logFile, String... options) {
        Jcnid d = new Jcnid(jcni);
        // A daemon still on the installation's socket would answer this test with another test's
        // counters and state; one a client auto-started without the test's environment (podman's
        // cleanup runs under conmon, which does not pass JCNI_AUTOSTART=0 on) is the usual one.
        List<Long> leftover = daemonsOn(jcni.socket);
        if (!leftover.isEmpty()) {
            System.err.println("jcnid left running on " + jcni.socket + " (pids " + leftover + "): stopped before this test's own");
            killDaemonsOn(jcni.socket);
        }
        List<String> args = new ArrayList<>(List.of("start", "--log-file", logFile.toString()));
        args.addAll(List.of(options));
        d.control(args.toArray(String[]::new)).ok();
        return d;
    }

    /** Runs {@code jcnid ARGS --socket <the installation's socket>}. */
    public Sh.Run control(String... args) {
        return control(jcni, args);
    }

    public static Sh.Run control(Installed jcni, String... args) {
        List<String> cmd = new ArrayList<>(List.of(jcni.root.resolve("jcni/bin/jcnid").toString()));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--socket", jcni.socket.toString()));
        return Sh.run(null, null, 60, cmd.toArray(String[]::new));
    }

    /**
     * Waits until the work DELs left behind (the retired links' deletion) is done:
     * tests that count links right after a DEL served by jcnid wait for this first.
     */
    public void awaitDeferredIdle() {
        awaitDeferredIdle(() -> control("status").ok().out());
    }

    /** Polls {@code status} (jcnid status's output) until it says "deferred 0"; fails after 20 s. */
    public static void awaitDeferredIdle(java.util.function.Supplier<String> status) {
        String last = "";
        for (int i = 0; i < 200; i++) {
            last = status.get();
            if (last.lines().anyMatch("deferred 0"::equals)) return;
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for jcnid's deferred work", e);
            }
        }
        throw new AssertionError("jcnid's deferred work did not finish within 20 s: " + last);
    }

    /** The daemon's pid from its pid file, or -1 when it has none. */
    public long pid() {
        return pid(jcni);
    }

    private static long pid(Installed jcni) {
        Path pidFile = jcni.socket.resolveSibling("jcnid.pid");
        try {
            return Files.exists(pidFile) ? Long.parseLong(Files.readString(pidFile).strip()) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** SIGKILL, as a crash or an OOM killer would; the socket and pid files stay behind. */
    public void kill() {
        long pid = pid();
        if (pid > 0) ProcessHandle.of(pid).ifPresent(h -> {
            h.destroyForcibly();
            h.onExit().join();
        });
    }

    /** Stops the daemon; kills it by its pid if it does not stop. */
    @Override
    public void close() {
        stop(jcni);
    }

    /** Stops whatever daemon serves the installation's socket (also one another test left running). */
    public static void stop(Installed jcni) {
        try {
            control(jcni, "stop");
        } catch (AssertionError ignored) {
            // killed below
        }
        long pid = pid(jcni);
        if (pid > 0) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }

    /** Every jcnid JVM whose command line names this socket (auto-started ones included). */
    public static List<Long> daemonsOn(Path socket) {
        List<Long> pids = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("/proc"))) {
            for (Path p : s.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
                String cmd;
                try {
                    cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8).replace('\0', ' ');
                } catch (IOException gone) {
                    continue;
                }
                if (cmd.contains("io.jcni.daemon.Jcnid") && cmd.contains(" " + socket + " ")) pids.add(Long.parseLong(p.getFileName().toString()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pids;
    }

    /** Stops every jcnid on this socket by its pid: SIGTERM, then SIGKILL after 30 s. */
    public static void killDaemonsOn(Path socket) {
        for (long pid : daemonsOn(socket)) {
            ProcessHandle.of(pid).ifPresent(h -> {
                h.destroy();
                try {
                    h.onExit().get(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    h.destroyForcibly();
                } catch (ExecutionException | TimeoutException e) {
                    h.destroyForcibly();
                }
            });
        }
    }

    /**
     * The directories of {@code cgroup} (a path relative to each hierarchy's root) that exist now:
     * cgroup2's at /sys/fs/cgroup and each cgroup v1 hierarchy's below it.
     */
    public static List<Path> cgroupDirs(String cgroup) {
        List<Path> dirs = new ArrayList<>(List.of(Path.of("/sys/fs/cgroup", cgroup)));
        try (Stream<Path> s = Files.list(Path.of("/sys/fs/cgroup"))) {
            s.forEach(h -> dirs.add(h.resolve(cgroup)));
        } catch (IOException ignored) {
            // no cgroup file system: nothing there
        }
        return dirs.stream().filter(Files::isDirectory).toList();
    }

    /** Removes {@code cgroup} under every hierarchy where it is empty (rmdir refuses a used one). */
    public static void removeEmptyCgroup(String cgroup) {
        for (Path d : cgroupDirs(cgroup)) Sh.quiet("rmdir", d.toString());
    }
}
