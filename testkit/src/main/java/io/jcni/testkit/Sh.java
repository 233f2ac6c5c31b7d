package io.jcni.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a command with a deadline and captures what it printed. */
public final class Sh {
    private Sh() {}

    public record Run(int rc, String out, String err) {
        public Run ok() {
            if (rc != 0) throw new AssertionError("exit " + rc + "\nstdout: " + out + "\nstderr: " + err);
            return this;
        }
    }

    public static Run run(Map<String, String> env, String stdin, long timeoutSeconds, String... cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (env != null) pb.environment().putAll(env);
        try {
            Process p = pb.start();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            try (var in = p.getOutputStream()) {
                if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd));
            }
            return new Run(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public static Run run(String... cmd) {
        return run(null, null, 120, cmd);
    }

    /** Runs and insists on exit 0; returns stdout. */
    public static String ok(String... cmd) {
        return run(cmd).ok().out();
    }

    /** Best effort, for cleanup: never throws. */
    public static void quiet(String... cmd) {
        try {
            run(null, null, 60, cmd);
        } catch (AssertionError ignored) {
            // cleanup goes on
        }
    }

    public static List<String> lines(String s) {
        List<String> out = new ArrayList<>();
        for (String l : s.split("\n")) if (!l.isBlank()) out.add(l.strip());
        return out;
    }

    private static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
