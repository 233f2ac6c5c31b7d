package io.jcni.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
}
