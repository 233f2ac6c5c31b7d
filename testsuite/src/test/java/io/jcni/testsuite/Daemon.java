package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.fail;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The installed jcnid running inside a world's host namespace, as on a node: callers in that
 * namespace are in jcnid's own, so plugins run directly on jcnid's threads. Its socket, pid file
 * and log are in the world's directory; shims reach it through {@link #env}. Closing stops it and,
 * failing that, kills it by its pid.
 */
final class Daemon implements AutoCloseable {
    final World w;
    final String jcnid;
    final Path socket;
    final Path pidFile;
    private final Process process;

    private Daemon(World w, String jcnid, Process process) {
        this.w = w;
        this.jcnid = jcnid;
        this.socket = w.dir.resolve("jcnid.sock");
        this.pidFile = w.dir.resolve("jcnid.pid");
        this.process = process;
    }

    static Daemon startIn(World w, Installed jcni) throws IOException, InterruptedException {
        String jcnid = jcni.root.resolve("jcni/bin/jcnid").toString();
        Process p = new ProcessBuilder("ip", "netns", "exec", w.host, jcnid, "start", "--foreground",
                "--socket", w.dir.resolve("jcnid.sock").toString(), "--pid-file", w.dir.resolve("jcnid.pid").toString(),
                "--log-file", w.dir.resolve("jcnid.log").toString(), "--request-timeout", "120")
                .redirectErrorStream(true).redirectOutput(w.dir.resolve("jcnid.out").toFile()).start();
        Daemon d = new Daemon(w, jcnid, p);
        for (int i = 0; i < 300; i++) {
            if (Files.exists(d.socket) && d.statusRun().rc() == 0) return d;
            if (!p.isAlive()) {
                d.close();
                fail("jcnid exited with " + p.exitValue());
            }
            Thread.sleep(100);
        }
        d.close();
        throw new AssertionError("jcnid did not answer");
    }

    /** env plus the variable that points the shims at this daemon. */
    Map<String, String> env(Map<String, String> env) {
        Map<String, String> m = new HashMap<>(env);
        m.put("JCNI_SOCKET", socket.toString());
        return m;
    }

    Sh.Run statusRun() {
        return w.inHost(null, null, jcnid, "status", "--socket", socket.toString());
    }

    String status() {
        return statusRun().ok().out();
    }

    /** Waits until the links DELs retired are deleted (see {@link io.jcni.testkit.Jcnid#awaitDeferredIdle}). */
    void awaitDeferredIdle() {
        io.jcni.testkit.Jcnid.awaitDeferredIdle(this::status);
    }

    String metrics() {
        return w.inHost(null, null, jcnid, "metrics", "--socket", socket.toString()).ok().out();
    }

    long pid() throws IOException {
        return Long.parseLong(Files.readString(pidFile).strip());
    }

    @Override
    public void close() {
        Sh.quiet("ip", "netns", "exec", w.host, jcnid, "stop", "--socket", socket.toString(), "--pid-file", pidFile.toString());
        try {
            if (Files.exists(pidFile)) ProcessHandle.of(pid()).ifPresent(ProcessHandle::destroyForcibly);
        } catch (IOException | NumberFormatException ignored) {
            // the process handle below still goes
        }
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
