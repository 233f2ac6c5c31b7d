package io.jcni.testkit;

import io.jcni.testfixtures.Proc;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
        Proc.Out o = Proc.run(pb, stdin, Math.toIntExact(timeoutSeconds));
        return new Run(o.rc(), o.out(), o.err());
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

}
