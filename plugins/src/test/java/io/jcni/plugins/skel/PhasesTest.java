package io.jcni.plugins.skel;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Phases.Phase;
import io.jcni.types.CniCommand;
import io.jcni.types.Result;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PhasesTest {

    @Test
    void eachIntervalGoesToThePhaseItLeaves() {
        Phases p = new Phases();
        assertNull(p.enterAt(Phase.QUEUE, 100));
        assertEquals(Phase.QUEUE, p.enterAt(Phase.PARSE, 150));
        assertEquals(Phase.PARSE, p.enterAt(Phase.PLUGIN, 400));
        Phase prev = p.enterAt(Phase.NFT, 500);
        assertEquals(Phase.PLUGIN, prev);
        p.enterAt(prev, 900);
        p.enterAt(null, 1000);

        assertEquals(50, p.nanos(Phase.QUEUE));
        assertEquals(250, p.nanos(Phase.PARSE));
        assertEquals(200, p.nanos(Phase.PLUGIN));
        assertEquals(400, p.nanos(Phase.NFT));
        assertEquals(0, p.nanos(Phase.IPAM));
        assertEquals(900, p.totalNanos());
        assertNull(p.current());
    }

    @Test
    void aStoppedClockAddsNothingAndRestartsWhereItIsEntered() {
        Phases p = new Phases();
        p.enterAt(null, 10);
        p.enterAt(Phase.IPAM, 1_000);
        p.enterAt(null, 3_000_000);
        p.enterAt(null, 9_000_000);
        p.enterAt(Phase.RESULT, 10_000_000);
        p.enterAt(null, 10_500_000);
        assertEquals(2_999_000, p.nanos(Phase.IPAM));
        assertEquals(500_000, p.nanos(Phase.RESULT));
        assertEquals(3_499_000, p.totalNanos());
        assertEquals("ipam:2.999,result:0.500", p.summary());
    }

    @Test
    void summaryOfAnUnusedClockIsEmpty() {
        assertEquals("", new Phases().summary());
    }

    private static Map<String, String> env(String cmd) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", cmd);
        env.put("CNI_CONTAINERID", "abc");
        env.put("CNI_NETNS", "/var/run/netns/x");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
        return env;
    }

    private static final byte[] CONF = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"t\"}".getBytes(StandardCharsets.UTF_8);

    /** A plugin that notes the phase it runs in, and optionally runs a nested call with its own context. */
    private static final class Probe implements Plugin {
        final List<Phase> seen = new ArrayList<>();
        Plugin nested;

        @Override
        public Result add(PluginRequest req) {
            seen.add(req.phases().current());
            if (nested != null) {
                Phase prev = req.phases().enter(Phase.IPAM);
                try {
                    assertEquals(0, Skel.run(() -> nested, env("ADD"), CONF, req.context()).exitCode());
                    seen.add(req.phases().current());
                } finally {
                    req.phases().enter(prev);
                }
            }
            seen.add(req.phases().current());
            return new Result("1.0.0", List.of(), List.of(), List.of(), null);
        }

        @Override
        public void del(PluginRequest req) {
            seen.add(req.phases().current());
        }

        @Override
        public void check(PluginRequest req) {}
    }

    private static PluginContext context(Phases phases) {
        return new PluginContext((c, t, s, e) -> new byte[0], new PrintStream(new ByteArrayOutputStream()), phases);
    }

    @Test
    void theSkeletonRunsThePluginInPluginAndGivesBackThePhaseItFound() {
        Phases phases = new Phases();
        phases.enter(Phase.NETNS);
        Probe probe = new Probe();
        assertEquals(0, Skel.run(() -> probe, env("ADD"), CONF, context(phases)).exitCode());
        assertEquals(List.of(Phase.PLUGIN, Phase.PLUGIN), probe.seen);
        assertEquals(Phase.NETNS, phases.current());
    }

    @Test
    void aStandaloneCallLeavesTheClockStopped() {
        Phases phases = new Phases();
        Probe probe = new Probe();
        assertEquals(0, Skel.run(() -> probe, env("DEL"), CONF, context(phases)).exitCode());
        assertEquals(List.of(Phase.PLUGIN), probe.seen);
        assertNull(phases.current());
    }

    @Test
    void aNestedCallIsTimedAsTheCallersPhase() {
        Phases phases = new Phases();
        Probe inner = new Probe();
        Probe outer = new Probe();
        outer.nested = inner;
        assertEquals(0, Skel.run(() -> outer, env("ADD"), CONF, context(phases)).exitCode());
        // The delegate's parse, plugin and result are all IPAM; the outer call is back in PLUGIN after it.
        assertEquals(List.of(Phase.IPAM, Phase.IPAM), inner.seen);
        assertEquals(List.of(Phase.PLUGIN, Phase.IPAM, Phase.PLUGIN), outer.seen);
        assertNull(phases.current());
    }

    @Test
    void aFailingCallStillRestoresThePhase() {
        Phases phases = new Phases();
        phases.enter(Phase.QUEUE);
        Map<String, String> bad = env("ADD");
        bad.remove("CNI_IFNAME");
        assertEquals(1, Skel.run(Probe::new, bad, CONF, context(phases)).exitCode());
        assertEquals(Phase.QUEUE, phases.current());
    }

    @Test
    void delegationTimesItsDelegateAsIpam() {
        List<Phase> seen = new ArrayList<>();
        Delegation[] d = new Delegation[1];
        d[0] = new Delegation(type -> null, new PrintStream(new ByteArrayOutputStream()), (c, t, s, e) -> {
            seen.add(d[0].context().phases().current());
            return new byte[0];
        });
        Phases phases = d[0].context().phases();
        phases.enter(Phase.PLUGIN);
        d[0].invoke(CniCommand.DEL, "host-local", CONF, env("DEL"));
        assertEquals(List.of(Phase.IPAM), seen);
        assertEquals(Phase.PLUGIN, phases.current());
    }
}
