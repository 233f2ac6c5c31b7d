package io.jcni.overlay;

import io.jcni.daemon.DaemonService;
import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/** {@code jcnid start --overlay ...}: hosts an {@link OverlayAgent} in the daemon (found by ServiceLoader). */
public final class OverlayService implements DaemonService {
    @Override
    public String enableFlag() {
        return "--overlay";
    }

    @Override
    public Set<String> valueFlags() {
        return AgentOptions.VALUE_FLAGS;
    }

    @Override
    public Set<String> switchFlags() {
        return AgentOptions.SWITCH_FLAGS;
    }

    @Override
    public AutoCloseable start(List<String> args, PrintStream log) {
        return OverlayAgent.start(AgentOptions.parse(args), log);
    }
}
