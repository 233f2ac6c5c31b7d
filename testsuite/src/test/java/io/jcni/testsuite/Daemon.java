package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The installed jcnid running inside a world's host namespace, as on a node (testfixtures'
 * {@link JcnidProcess}): callers in that namespace are in jcnid's own, so plugins run directly on
 * jcnid's threads. Its socket, pid file and log are in the world's directory; shims reach it through
 * {@link #env}. Closing stops it and, failing that, kills it by its pid.
 */
final class Daemon implements AutoCloseable {
    final World w;
    final String jcnid;
    final Path socket;
    final Path pidFile;
    private final JcnidProcess process;

    private Daemon(World w, String jcnid, JcnidProcess process) {
        this.w = w;
        this.jcnid = jcnid;
        this.socket = process.socket;
        this.pidFile = w.dir.resolve("jcnid.pid");
        this.process = process;
    }

    static Daemon startIn(World w, Installed jcni) throws IOException, InterruptedException {
        Path jcnid = jcni.root.resolve("jcni/bin/jcnid");
        JcnidProcess p = JcnidProcess.startInstalled(w, w.host, jcnid, w.dir.resolve("jcnid.sock"), w.dir.resolve("jcnid.out"),
                "--pid-file", w.dir.resolve("jcnid.pid").toString(), "--log-file", w.dir.resolve("jcnid.log").toString(), "--request-timeout", "120");
        Daemon d = new Daemon(w, jcnid.toString(), p);
        try {
            Await.until("jcnid answering status", Duration.ofSeconds(30), () -> {
                if (!p.alive()) throw new AssertionError("jcnid exited\n" + p.log());
                return Files.exists(d.socket) && d.statusRun().rc() == 0;
            });
        } catch (Exception | AssertionError e) {
            d.close();
            throw new AssertionError("jcnid did not answer\n" + p.log(), e);
        }
        return d;
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
            process.kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
