package io.jcni.plugins.testutil;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.plugins.skel.Skel;
import io.jcni.types.Result;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Calls a jcni plugin in-process through the skeleton, the way a runtime would call the executable. */
public final class PluginCall {
    private final String type;
    private final Map<String, String> env = new HashMap<>();
    public final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    public PluginCall(String type) {
        this.type = type;
        env.put("CNI_CONTAINERID", "ctr1");
        env.put("CNI_NETNS", "/var/run/netns/none");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
    }

    private io.jcni.plugins.skel.Background background;

    /** Calls get this background (as in jcnid); none by default (as a standalone plugin). */
    public PluginCall background(io.jcni.plugins.skel.Background b) {
        this.background = b;
        return this;
    }

    private io.jcni.plugins.skel.PluginContext context() {
        return io.jcni.plugins.common.ipam.Delegation.context(io.jcni.plugins.PluginRegistry::lookup, new PrintStream(stderr),
                new io.jcni.plugins.skel.Phases(), background);
    }

    public PluginCall env(String k, String v) {
        if (v == null) env.remove(k);
        else env.put(k, v);
        return this;
    }

    public Skel.Outcome run(String command, String stdin) {
        Map<String, String> e = new HashMap<>(env);
        e.put("CNI_COMMAND", command);
        return Skel.run(PluginRegistry.lookup(type), e, stdin.getBytes(StandardCharsets.UTF_8), context());
    }

    /** Runs and insists on success; returns the parsed stdout (or an empty map when there is none). */
    public Map<String, Object> ok(String command, String stdin) {
        Skel.Outcome o = run(command, stdin);
        if (o.exitCode() != 0) throw new AssertionError(type + " " + command + " failed: " + o.stdout() + "\nstderr: " + stderr);
        return o.stdout().isEmpty() ? Map.of() : Json.parseObject(o.stdout());
    }

    /**
     * The request the skeleton hands the plugin for this call (env and stdin decoded, nothing run),
     * for config-parsing tests; fails with the skeleton's error when it refuses the call.
     */
    public PluginRequest request(String command, String stdin) {
        PluginRequest[] seen = new PluginRequest[1];
        Plugin capture = new Plugin() {
            @Override
            public Result add(PluginRequest req) {
                seen[0] = req;
                return req.prevResult() != null ? req.prevResult() : new Result(req.version().toString(), List.of(), List.of(), List.of(), Result.Dns.EMPTY);
            }

            @Override
            public void del(PluginRequest req) {
                seen[0] = req;
            }

            @Override
            public void check(PluginRequest req) {
                seen[0] = req;
            }
        };
        Map<String, String> e = new HashMap<>(env);
        e.put("CNI_COMMAND", command);
        Skel.Outcome o = Skel.run(() -> capture, e, stdin.getBytes(StandardCharsets.UTF_8), PluginRegistry.context(new PrintStream(stderr)));
        if (seen[0] == null) throw new AssertionError(type + " " + command + " refused before the plugin ran: " + o.stdout());
        return seen[0];
    }

    /** Runs and insists on failure; returns the error object. */
    public Map<String, Object> fails(String command, String stdin) {
        Skel.Outcome o = run(command, stdin);
        if (o.exitCode() == 0) throw new AssertionError(type + " " + command + " unexpectedly succeeded: " + o.stdout());
        return Json.parseObject(o.stdout());
    }
}
