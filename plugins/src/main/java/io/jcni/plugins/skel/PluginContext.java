package io.jcni.plugins.skel;

import io.jcni.runtime.Delegator;
import java.io.PrintStream;

/**
 * What the caller of {@link Skel#run} gives a plugin besides the CNI call itself: how to run
 * delegate plugins (libcni's {@code invoke.DelegateAdd(..., exec)} takes its executor the same way)
 * and where diagnostics go. The standalone executable, jcnid and tests each supply their own, so a
 * plugin never reaches for a global: inside jcnid a delegated IPAM runs through the registry jcnid
 * was given, and warnings reach the caller's stderr rather than the daemon's log.
 *
 * @param delegator runs delegate plugins (IPAM) for this call
 * @param log this call's stderr: diagnostics only, never the CNI answer
 * @param phases this call's phase clock (jcnid reads it for its metrics)
 * @param background where work may go that can finish after the answer, or null: do everything now
 */
public record PluginContext(Delegator delegator, PrintStream log, Phases phases, Background background) {
    public PluginContext {
        if (delegator == null || log == null || phases == null) throw new NullPointerException("delegator, log and phases are required");
    }

    /** A context with a clock of its own and no background. */
    public PluginContext(Delegator delegator, PrintStream log) {
        this(delegator, log, new Phases(), null);
    }

    /** A context without background: everything is done before the answer. */
    public PluginContext(Delegator delegator, PrintStream log, Phases phases) {
        this(delegator, log, phases, null);
    }
}
