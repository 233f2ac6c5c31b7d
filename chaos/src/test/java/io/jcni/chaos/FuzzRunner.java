package io.jcni.chaos;

import io.jcni.daemon.JcnidClient;
import io.jcni.linux.Netns;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Skel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one plugin call three ways, each bounded in time: in-process through {@link Skel#run} on a
 * thread inside the world's host namespace (cheap, most cases), through the jcnid socket as the
 * shim would send it (the daemon acts in the namespace of a process we keep in the host
 * namespace), and as the installed standalone JVM plugin in the host namespace with a clean
 * environment (no LANG, as runtimes start plugins).
 */
final class FuzzRunner implements AutoCloseable {
    enum Mode { IN_PROCESS, DAEMON, PROCESS }

    /** What a call printed and returned; {@code null} exit: it did not end within the bound. */
    record Outcome(Integer exit, byte[] stdout, String stderr) {
        String stdoutText() {
            return new String(stdout, StandardCharsets.UTF_8);
        }
    }

    /** Far above any honest call, even a standalone JVM on a loaded machine; a FIFO or an endless file never ends. */
    static final long BOUND_SECONDS = 20;

    private final String hostNetnsPath;
    private final Path socket;
    private final Path libexec;
    private final String hostName;
    private final long callerPid;
    private final ExecutorService callers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fuzz-caller");
        t.setDaemon(true);
        return t;
    });
    private Netns host;

    FuzzRunner(String hostName, Path socket, Path libexec, long callerPid) {
        this.hostName = hostName;
        this.hostNetnsPath = "/var/run/netns/" + hostName;
        this.socket = socket;
        this.libexec = libexec;
        this.callerPid = callerPid;
        this.host = Netns.open(hostNetnsPath);
    }

    Outcome run(Mode mode, String type, Map<String, String> env, byte[] stdin) {
        return switch (mode) {
            case IN_PROCESS -> inProcess(type, env, stdin);
            case DAEMON -> bounded(() -> {
                Map<String, String> e = new HashMap<>(env);
                e.put("JCNI_CALLER_PID", Long.toString(callerPid));
                JcnidClient.Reply r = JcnidClient.exec(socket, type, e, stdin);
                if (r.declined() || r.result() == null) return new Outcome(-1000, new byte[0], "jcnid declined (status " + (char) r.status() + ")");
                return new Outcome(r.result().exitCode(), r.result().stdout(), new String(r.result().stderr(), StandardCharsets.UTF_8));
            });
            case PROCESS -> process(type, env, stdin);
        };
    }

    private Outcome inProcess(String type, Map<String, String> env, byte[] stdin) {
        Netns ns = host;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        Outcome o = bounded(() -> ns.run(() -> {
            try (PrintStream ps = new PrintStream(log, true, StandardCharsets.UTF_8)) {
                Skel.Outcome out = Skel.run(PluginRegistry.lookup(type), env, stdin, PluginRegistry.context(ps));
                return new Outcome(out.exitCode(), out.stdout().getBytes(StandardCharsets.UTF_8), log.toString(StandardCharsets.UTF_8));
            } catch (Throwable t) {
                // What would kill a standalone plugin with a trace and no JSON: an error, not a CNI answer.
                java.io.StringWriter w = new java.io.StringWriter();
                t.printStackTrace(new java.io.PrintWriter(w));
                return new Outcome(-999, new byte[0], "escaped Skel.run: " + w);
            }
        }));
        if (o.exit() == null) host = Netns.open(hostNetnsPath); // the hung thread keeps the old one
        return o;
    }

    private Outcome process(String type, Map<String, String> env, byte[] stdin) {
        ProcessBuilder pb = new ProcessBuilder("ip", "netns", "exec", hostName, libexec.resolve(type).toString());
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Outcome(-1001, new byte[0], "cannot start: " + e);
        }
        CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()), callers);
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()), callers);
        // execute, not submit: nothing waits for the writer, and an unexpected failure reaches the
        // thread's handler instead of a Future no one reads.
        callers.execute(() -> {
            try (var in = p.getOutputStream()) {
                in.write(stdin);
            } catch (IOException ignored) {
                // the plugin need not read all of it
            }
        });
        try {
            if (!p.waitFor(BOUND_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                return new Outcome(null, new byte[0], "");
            }
            return new Outcome(p.exitValue(), out.get(10, TimeUnit.SECONDS), new String(err.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
        } catch (Exception e) {
            return new Outcome(-1002, new byte[0], "harness: " + e);
        }
    }

    private Outcome bounded(java.util.concurrent.Callable<Outcome> call) {
        Future<Outcome> f = callers.submit(call);
        try {
            return f.get(BOUND_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return new Outcome(null, new byte[0], "");
        } catch (Exception e) {
            return new Outcome(-1002, new byte[0], "harness: " + e);
        }
    }

    private static byte[] readAll(InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    @Override
    public void close() {
        callers.shutdownNow();
        host.close();
    }
}
