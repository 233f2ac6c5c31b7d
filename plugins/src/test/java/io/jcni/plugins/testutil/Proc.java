package io.jcni.plugins.testutil;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs a process for a test: stdin in, output out, a deadline that holds even when the process never closes stdout. */
public final class Proc {
    private Proc() {}

    /** Exit code and stdout (with stderr too when the builder merges it). */
    public record Out(int rc, String out) {
        /** The output, or a failure naming the command when the exit code is not 0. */
        public String ok(Object what) {
            if (rc != 0) throw new AssertionError(what + " exited " + rc + ": " + out);
            return out;
        }
    }

    public static Out run(ProcessBuilder pb, String stdin, int timeoutSeconds) {
        try {
            Process p = pb.start();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the process did not want its stdin; its exit code tells the rest
            }
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("timed out after " + timeoutSeconds + " s: " + pb.command());
            }
            return new Out(p.exitValue(), out.join());
        } catch (IOException e) {
            throw new AssertionError(pb.command() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Runs a command (stderr merged, 30 s) and insists on success; returns its output. */
    public static String ok(String... cmd) {
        return run(new ProcessBuilder(cmd).redirectErrorStream(true), "", 30).ok(String.join(" ", cmd));
    }

    private static String read(InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
