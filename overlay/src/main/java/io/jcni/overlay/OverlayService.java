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
    public DaemonService.Running start(List<String> args, PrintStream log) {
        OverlayAgent agent = OverlayAgent.start(AgentOptions.parse(args), log);
        return new DaemonService.Running() {
            @Override
            public String status() {
                return "overlay_subnet " + (agent.subnet() == null ? "pending" : agent.subnet()) + "\n";
            }

            @Override
            public void close() {
                agent.close();
            }
        };
    }
}
