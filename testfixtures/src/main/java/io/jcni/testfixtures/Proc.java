package io.jcni.testfixtures;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The one process runner of the tests: stdin in, stdout and stderr out (read while the process runs,
 * so a full pipe never blocks it), and a deadline that holds even when the process never closes its
 * stdout (a daemon it started keeps the pipe open): then it and its descendants are killed and the
 * test fails naming the command.
 */
public final class Proc {
    private Proc() {}

    /** The exit code, stdout (with stderr in it when the builder merges them) and stderr. */
    public record Out(int rc, String out, String err) {
        /** stdout, or a failure naming {@code what} when the exit code is not 0. */
        public String ok(Object what) {
            if (rc != 0) throw new AssertionError(what + " exited " + rc + ": " + out + err);
            return out;
        }
    }

    /** Runs {@code pb} as it is configured (environment, directory, redirects), writing {@code stdin} (null: none). */
    public static Out run(ProcessBuilder pb, String stdin, int timeoutSeconds) {
        try {
            Process p = pb.start();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
            try (OutputStream in = p.getOutputStream()) {
                if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the process did not want its stdin; its exit code tells the rest
            }
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("timed out after " + timeoutSeconds + " s: " + pb.command());
            }
            return new Out(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new AssertionError(pb.command() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Runs {@code cmd} with stderr merged into stdout, no stdin, within 30 s. */
    public static Out run(List<String> cmd) {
        return run(new ProcessBuilder(cmd).redirectErrorStream(true), null, 30);
    }

    /** Runs a command (stderr merged, 30 s) and insists on success; returns its output. */
    public static String ok(String... cmd) {
        return run(List.of(cmd)).ok(String.join(" ", cmd));
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
