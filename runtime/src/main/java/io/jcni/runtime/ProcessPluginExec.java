package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs plugins as child processes: the config on stdin, the CNI variables over the inherited
 * environment (as libcni does), stdout captured and parsed, stderr captured and handed to a sink.
 * A plugin that outlives the timeout is killed together with its descendants.
 */
public final class ProcessPluginExec implements PluginExec {

    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(2);
    static final int MAX_STDOUT = 16 << 20;
    static final int MAX_STDERR = 1 << 20;
    private static final int START_ATTEMPTS = 6;
    private static final Duration DRAIN_AFTER_EXIT = Duration.ofSeconds(2);

    private final Duration timeout;
    private final Consumer<String> stderrSink;
    private final Map<String, String> baseEnv;

    /** Inherits the environment, times out after {@link #DEFAULT_TIMEOUT}, copies plugin stderr to ours. */
    public ProcessPluginExec() {
        this(DEFAULT_TIMEOUT, stderrTo(System.err), null);
    }

    /**
     * @param timeout how long a plugin may run before it is killed
     * @param stderrSink receives whatever a plugin wrote to stderr (called once per run, only when non-empty)
     * @param baseEnv the environment under the CNI variables; null inherits this process's
     */
    public ProcessPluginExec(Duration timeout, Consumer<String> stderrSink, Map<String, String> baseEnv) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout must be positive");
        this.timeout = timeout;
        this.stderrSink = stderrSink == null ? s -> {} : stderrSink;
        this.baseEnv = baseEnv == null ? null : Map.copyOf(baseEnv);
    }

    public Duration timeout() {
        return timeout;
    }

    /** A stderr sink that copies a plugin's stderr to {@code out}, ending it with a newline. */
    public static Consumer<String> stderrTo(PrintStream out) {
        return s -> {
            out.print(s);
            if (!s.endsWith("\n")) out.println();
            out.flush();
        };
    }

    @Override
    public byte[] run(Path plugin, byte[] stdin, CniEnvironment env) {
        Objects.requireNonNull(plugin, "plugin");
        String name = plugin.getFileName() == null ? plugin.toString() : plugin.getFileName().toString();
        ProcessBuilder pb = new ProcessBuilder(plugin.toString());
        Map<String, String> e = pb.environment();
        if (baseEnv != null) {
            e.clear();
            e.putAll(baseEnv);
        }
        e.putAll(env.toMap());

        Process p = start(pb, name);
        Capture out = Capture.start(p.getInputStream(), MAX_STDOUT, name + "-stdout");
        Capture err = Capture.start(p.getErrorStream(), MAX_STDERR, name + "-stderr");
        Thread.ofVirtual().name(name + "-stdin").start(() -> {
            try (OutputStream os = p.getOutputStream()) {
                os.write(stdin == null ? new byte[0] : stdin);
            } catch (IOException ignored) {
                // the plugin need not read its stdin (e.g. it failed early); its exit status tells the story
            }
        });

        boolean exited;
        try {
            exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException ie) {
            killTree(p);
            Thread.currentThread().interrupt();
            throw new PluginException(name, ErrorCode.INTERNAL, "interrupted while running plugin " + name, "the plugin was killed", "");
        }
        if (!exited) {
            killTree(p);
            String stderr = err.await(DRAIN_AFTER_EXIT);
            out.await(DRAIN_AFTER_EXIT);
            throw new PluginException(name, ErrorCode.INTERNAL, "plugin " + name + " timed out",
                    "no answer within " + describe(timeout) + "; the plugin was killed" + tail("stderr", stderr), stderr);
        }
        int status = p.exitValue();
        byte[] stdout = out.awaitBytes(DRAIN_AFTER_EXIT);
        String stderr = err.await(DRAIN_AFTER_EXIT);
        // a failure without stdout carries its stderr in the error message; everything else goes to the sink
        if (status == 0 || !new String(stdout, StandardCharsets.UTF_8).isBlank()) emit(stderr);
        if (out.truncated()) {
            throw new PluginException(name, ErrorCode.IO_FAILURE, "plugin " + name + " printed too much",
                    "stdout exceeded " + MAX_STDOUT + " bytes", stderr);
        }
        if (status == 0) return stdout;
        throw failure(name, status, stdout, stderr);
    }

    /** Turns a non-zero exit into the plugin's own error, or a description of what went wrong. */
    public static PluginException failure(String name, int status, byte[] stdoutBytes, String stderr) {
        String exit = describeExit(status);
        String stdout = new String(stdoutBytes, StandardCharsets.UTF_8).strip();
        if (stdout.isEmpty()) {
            if (stderr.isBlank()) {
                return new PluginException(name, ErrorCode.INTERNAL, "plugin " + name + " failed with no error message", exit, stderr);
            }
            return new PluginException(name, ErrorCode.INTERNAL, "plugin " + name + " failed", exit + tail("stderr", stderr), stderr);
        }
        try {
            Object v = Json.parse(stdout);
            if (v instanceof Map<?, ?> m) {
                CniException ce = CniException.fromJson(Json.asObject(m));
                if (ce != null) return new PluginException(name, "", ce.code(), ce.msg(), ce.details(), stderr);
            }
        } catch (Json.JsonException ignored) {
            // fall through: not an error object
        }
        return new PluginException(name, ErrorCode.INTERNAL, "plugin " + name + " failed and its output is not a CNI error",
                exit + "; stdout: " + abbreviate(stdout, 400) + tail("stderr", stderr), stderr);
    }

    /** Exit statuses above 128 are how the JDK reports death by signal (128 + signal number). */
    static String describeExit(int status) {
        if (status > 128 && status < 128 + 65) {
            int sig = status - 128;
            return "exit status " + status + " (killed by signal " + sig + signalName(sig) + ")";
        }
        return "exit status " + status;
    }

    private static String signalName(int sig) {
        List<String> names = List.of("", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
                "SEGV", "USR2", "PIPE", "ALRM", "TERM");
        return sig < names.size() ? " SIG" + names.get(sig) : "";
    }

    private static String tail(String label, String s) {
        if (s == null || s.isBlank()) return "";
        String t = s.strip();
        if (t.length() > 2000) t = "..." + t.substring(t.length() - 2000);
        return "; " + label + ": " + t;
    }

    static String abbreviate(String s, int max) {
        String one = s.replace('\n', ' ');
        return one.length() <= max ? one : one.substring(0, max) + "...";
    }

    private static String describe(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }

    private void emit(String stderr) {
        if (stderr != null && !stderr.isEmpty()) {
            try {
                stderrSink.accept(stderr);
            } catch (RuntimeException ignored) {
                // logging must never turn a plugin's success into a failure
            }
        }
    }

    /** Starts the process, retrying on ETXTBSY (a plugin binary that is still being written). */
    private static Process start(ProcessBuilder pb, String name) {
        IOException last = null;
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            try {
                return pb.start();
            } catch (IOException e) {
                last = e;
                String m = String.valueOf(e.getMessage());
                if (!(m.contains("error=26") || m.contains("Text file busy"))) break;
                try {
                    Thread.sleep(Math.min(1000, 50L << attempt));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        throw new PluginException(name, ErrorCode.IO_FAILURE, "cannot execute plugin " + name,
                String.valueOf(last == null ? "" : last.getMessage()), "");
    }

    /** Kills the plugin and everything it started, children first so none is reparented and missed. */
    private static void killTree(Process p) {
        List<ProcessHandle> kids;
        try {
            kids = p.descendants().toList();
        } catch (RuntimeException e) {
            kids = List.of();
        }
        p.destroyForcibly();
        for (ProcessHandle h : kids) h.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    /** Drains one stream on a virtual thread, keeping at most {@code limit} bytes. */
    private static final class Capture {
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        private final int limit;
        private volatile boolean truncated;
        private Thread thread;

        private Capture(int limit) {
            this.limit = limit;
        }

        static Capture start(InputStream in, int limit, String name) {
            Capture c = new Capture(limit);
            c.thread = Thread.ofVirtual().name(name).start(() -> c.drain(in));
            return c;
        }

        private void drain(InputStream in) {
            byte[] chunk = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(chunk)) >= 0) {
                    synchronized (buf) {
                        int room = limit - buf.size();
                        if (room > 0) buf.write(chunk, 0, Math.min(room, n));
                        if (n > room) truncated = true;
                    }
                }
            } catch (IOException ignored) {
                // the stream closed under us: keep what we have
            }
        }

        byte[] awaitBytes(Duration d) {
            try {
                thread.join(d);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            synchronized (buf) {
                return buf.toByteArray();
            }
        }

        String await(Duration d) {
            return new String(awaitBytes(d), StandardCharsets.UTF_8);
        }

        boolean truncated() {
            return truncated;
        }
    }
}
