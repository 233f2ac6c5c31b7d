package io.jcni.overlay;

import java.io.PrintStream;
import java.time.Instant;

/** The overlay agent's log lines: {@code <time> jcnid overlay msg="..." fields}. */
final class AgentLog {
    private final PrintStream out;

    AgentLog(PrintStream out) {
        this.out = out;
    }

    /** Never throws: a log line that cannot be built (heap full) is dropped, not allowed to end the loop that logs it. */
    void log(String msg, String fields) {
        try {
            out.println(Instant.now() + " jcnid overlay msg=\"" + msg + "\"" + (fields.isEmpty() ? "" : " " + fields));
        } catch (Throwable ignored) {
            // out of memory: the watchdog frees its reserve and acts; the next line gets through
        }
    }
}
