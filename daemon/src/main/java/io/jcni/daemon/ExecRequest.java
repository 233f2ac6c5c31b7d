package io.jcni.daemon;

import io.jcni.plugins.skel.Skel;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An EXEC request as jcnid needs it before the plugin runs: the environment rebuilt as
 * {@code System.getenv()} would see it, and the two configuration keys jcnid itself reads (the
 * network name for the attachment lock, {@code cniVersion} for the errors it answers on the
 * plugin's behalf), decoded once and the way the plugin decodes them ({@link Fields}: Go's
 * case-insensitive keys), so the lock and the errors agree with what the plugin sees.
 *
 * @param type       the plugin type
 * @param env        the plugin's environment, without {@link #CALLER_PID}
 * @param callerPid  the shim's pid, or null
 * @param command    the command as a metrics label ("ADD", ..., "none" or "other")
 * @param lockKey    the attachment's lock key; null for commands that are not per attachment
 * @param stdin      the network configuration, as sent
 * @param cniVersion the configuration's cniVersion; empty when it has none (or is no JSON object)
 */
record ExecRequest(String type, Map<String, String> env, String callerPid, String command, String lockKey, byte[] stdin,
        String cniVersion) {

    /**
     * Set by the shim: its pid. A plugin's host-side work belongs in the caller's network namespace
     * (a runtime may itself run inside one), not the daemon's, and the caller is alive and blocked
     * on us while the request runs, so /proc/PID/ns/net names it reliably.
     */
    static final String CALLER_PID = "JCNI_CALLER_PID";

    static ExecRequest of(Protocol.Exec ex) {
        Map<String, String> env = environment(ex.env());
        String callerPid = env.remove(CALLER_PID);
        String commandValue = env.getOrDefault("CNI_COMMAND", "");
        CniCommand cmd = CniCommand.of(commandValue);
        Map<String, Object> conf = configuration(ex.stdin());
        String lockKey = cmd != null && cmd.isPerAttachment()
                ? AttachmentLocks.key(ex.type(), env.getOrDefault("CNI_CONTAINERID", ""), env.getOrDefault("CNI_IFNAME", ""),
                        stringKey(conf, "name"))
                : null;
        return new ExecRequest(ex.type(), env, callerPid, commandLabel(commandValue), lockKey, ex.stdin(),
                stringKey(conf, "cniVersion"));
    }

    /** Like {@code System.getenv()}: on duplicate keys the last one wins. */
    private static Map<String, String> environment(List<String> entries) {
        Map<String, String> env = new HashMap<>();
        for (String e : entries) {
            int eq = e.indexOf('=');
            if (eq > 0) env.put(e.substring(0, eq), e.substring(eq + 1));
        }
        return env;
    }

    /** The configuration object, or an empty one when stdin is not one: the skeleton reports that. */
    private static Map<String, Object> configuration(byte[] stdin) {
        try {
            return Json.parseObject(new String(stdin, StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    private static String stringKey(Map<String, Object> conf, String key) {
        try {
            String s = Fields.string(conf, key, "");
            return s == null ? "" : s;
        } catch (CniException e) {
            return ""; // not a string: the skeleton reports it
        }
    }

    private static String commandLabel(String c) {
        if (c.isEmpty()) return "none";
        return CniCommand.of(c) == null ? "other" : c;
    }

    String containerId() {
        return env.getOrDefault("CNI_CONTAINERID", "");
    }

    String ifname() {
        return env.getOrDefault("CNI_IFNAME", "");
    }

    /** The error as the skeleton would print it: in the configuration's cniVersion when there is one. */
    Skel.Outcome error(CniException e) {
        return errorOutcome(cniVersion, e);
    }

    /** An error answered without a configuration (malformed frames): in the current version. */
    static Skel.Outcome errorOutcome(String cniVersion, CniException e) {
        String v = cniVersion == null || cniVersion.isEmpty() ? CniVersion.CURRENT.toString() : cniVersion;
        return new Skel.Outcome(Json.writePretty(e.toJson(v)), 1);
    }
}
