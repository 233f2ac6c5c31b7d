package io.jcni.plugins.common;

import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Cleanup of a half-done ADD, as Go's {@code defer} does it: right after each step succeeds, its
 * undo is registered; unless {@link #commit()} is reached, closing runs the undos in reverse order.
 * A failing undo is logged and the rest still run: the error that stopped ADD is the one to report.
 *
 * <pre>{@code
 * try (Undo undo = new Undo(req.log())) {
 *     createVeth();
 *     undo.add("delete the container interface", () -> ...);
 *     ...
 *     undo.commit();
 *     return result;
 * }
 * }</pre>
 */
public final class Undo implements AutoCloseable {
    private record Step(String what, Runnable undo) {}

    private final Deque<Step> steps = new ArrayDeque<>();
    private final PrintStream log;
    private boolean committed;

    /** @param log where a failing undo is reported */
    public Undo(PrintStream log) {
        this.log = log;
    }

    /** Registers the undo of a step that has just succeeded. */
    public void add(String what, Runnable undo) {
        steps.push(new Step(what, undo));
    }

    /** Every step succeeded: closing undoes nothing. */
    public void commit() {
        committed = true;
    }

    @Override
    public void close() {
        if (committed) return;
        while (!steps.isEmpty()) {
            Step s = steps.pop();
            try {
                s.undo().run();
            } catch (RuntimeException e) {
                log.println(s.what() + " after a failed ADD failed: " + e.getMessage());
            }
        }
    }
}
