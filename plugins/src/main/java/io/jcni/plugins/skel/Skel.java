package io.jcni.plugins.skel;

import io.jcni.plugins.common.Privilege;
import io.jcni.types.Attachment;
import io.jcni.types.CniArgs;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import io.jcni.types.Names;
import io.jcni.types.PluginConf;
import io.jcni.types.Result;
import io.jcni.types.VersionInfo;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The plugin side of the CNI protocol, as the reference plugins' pkg/skel does it: validate the
 * CNI_* environment, negotiate the version, dispatch on CNI_COMMAND, print the result or the error
 * as JSON on stdout. Nothing but JSON ever reaches stdout; diagnostics go to stderr.
 */
public final class Skel {

    private Skel() {}

    /** The outcome of one call: what goes to stdout and the exit code. */
    public record Outcome(String stdout, int exitCode) {}

    /**
     * Runs one plugin call. Pure with respect to process state: environment and stdin come in,
     * stdout text and the exit code come out, so the daemon and tests can use it as well as main().
     * The caller's {@code context} carries the delegator and the log (stderr) the plugin uses.
     */
    public static Outcome run(Supplier<Plugin> plugin, Map<String, String> env, byte[] stdin, PluginContext context) {
        Phases phases = context.phases();
        if (!phases.openCall()) {
            try {
                return runCall(plugin, env, stdin, context, null);
            } finally {
                phases.closeCall();
            }
        }
        Phases.Phase outer = phases.enter(Phases.Phase.PARSE);
        try {
            return runCall(plugin, env, stdin, context, phases);
        } finally {
            phases.closeCall();
            phases.enter(outer);
        }
    }

    /** One call; {@code phases} is null for a nested (delegated) call, whose time belongs to its caller's phase. */
    private static Outcome runCall(Supplier<Plugin> plugin, Map<String, String> env, byte[] stdin, PluginContext context,
                                   Phases phases) {
        PrintStream log = context.log();
        String confVersion = null;
        try {
            CniCommand cmd = command(env);
            if (cmd == CniCommand.VERSION) return new Outcome(Json.writePretty(VersionInfo.ours()), 0);
            String containerId = env.getOrDefault("CNI_CONTAINERID", "");
            String netns = env.getOrDefault("CNI_NETNS", "");
            String ifname = env.getOrDefault("CNI_IFNAME", "");
            checkEnvironment(cmd, containerId, netns, ifname, env);
            Map<String, Object> conf = parseConf(stdin);
            // Config keys are read as Go's encoding/json reads them (Fields: "CNIVersion" counts).
            String v = Fields.string(conf, "cniVersion", "");
            confVersion = v == null ? "" : v;
            CniVersion version = CniVersion.parseSupported(confVersion);
            if (!cmd.allowedIn(version)) {
                throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "config version does not allow " + cmd);
            }
            PluginConf.checkNetConf(conf, "");
            Result prev = null;
            try {
                prev = prevResult(conf, version);
            } catch (CniException e) {
                // DEL must be able to clean up whatever the cached result holds: it goes on
                // without the prevResult (which DEL never needs) rather than leak.
                if (cmd != CniCommand.DEL) throw e;
                log.println("ignoring undecodable prevResult on DEL: " + e.getMessage());
            }
            PluginRequest req = new PluginRequest(cmd, containerId, netns, ifname, CniArgs.parse(env.get("CNI_ARGS")),
                    splitPath(env.get("CNI_PATH")), stdin, conf, version, prev, env, context);
            return dispatch(plugin.get(), req, phases);
        } catch (CniException e) {
            if (phases != null) phases.enter(Phases.Phase.RESULT);
            CniException unprivileged = Privilege.unprivileged(e, e.details().isEmpty() ? e.msg() : e.msg() + ": " + e.details());
            return failure(unprivileged != null ? unprivileged : e, confVersion);
        } catch (Exception | LinkageError | AssertionError e) {
            // Anything unexpected is still a spec error on stdout, with the trace kept for stderr.
            if (phases != null) phases.enter(Phases.Phase.RESULT);
            String details = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            CniException unprivileged = Privilege.unprivileged(e, details);
            if (unprivileged != null) return failure(unprivileged, confVersion); // no fault of ours: no trace
            e.printStackTrace(log);
            return failure(new CniException(ErrorCode.INTERNAL, "internal error", details, e), confVersion);
        }
    }

    /** The environment a command needs, as the reference's skel checks it, before the config is read. */
    private static void checkEnvironment(CniCommand cmd, String containerId, String netns, String ifname,
                                         Map<String, String> env) {
        List<String> missing = new ArrayList<>();
        if (cmd.isPerAttachment() && containerId.isEmpty()) missing.add("CNI_CONTAINERID");
        if ((cmd == CniCommand.ADD || cmd == CniCommand.CHECK) && netns.isEmpty()) missing.add("CNI_NETNS");
        if (cmd.isPerAttachment() && ifname.isEmpty()) missing.add("CNI_IFNAME");
        if (!env.containsKey("CNI_PATH") && cmd != CniCommand.STATUS) missing.add("CNI_PATH");
        if (!missing.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "required env variables " + missing + " missing");
        }
        // exec(2) cannot carry a NUL, jcnid's frames can: no path with one may reach a plugin (Path.of throws).
        if (netns.indexOf('\0') >= 0) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "invalid CNI_NETNS", "the path contains a NUL character");
        }
        // As the reference's skel: the per-attachment names are checked for the commands that use them.
        if (cmd.isPerAttachment()) {
            Names.checkContainerId(containerId);
            Names.checkInterfaceName(ifname);
        }
    }

    /** The network configuration on stdin, decoded, with its name checked. */
    private static Map<String, Object> parseConf(byte[] stdin) {
        if (stdin == null || stdin.length == 0) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "error reading from stdin", "no network configuration given");
        }
        Map<String, Object> conf;
        try {
            conf = Json.parseObject(new String(stdin, StandardCharsets.UTF_8));
        } catch (Json.JsonException e) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "failed to decode network configuration", e);
        }
        checkNetworkName(conf);
        return conf;
    }

    /** Runs the request's command on the plugin; only ADD prints a result. */
    private static Outcome dispatch(Plugin p, PluginRequest req, Phases phases) throws Exception {
        if (phases != null) phases.enter(Phases.Phase.PLUGIN);
        switch (req.command()) {
            case ADD -> {
                Result r = p.add(req);
                if (phases != null) phases.enter(Phases.Phase.RESULT);
                return new Outcome(Json.writePretty(r.withVersion(req.version().toString())), 0);
            }
            case DEL -> p.del(req);
            case CHECK -> p.check(req);
            case GC -> {
                requireValidAttachments(req);
                p.gc(req);
            }
            case STATUS -> p.status(req);
            default -> throw new IllegalStateException();
        }
        return new Outcome("", 0);
    }

    /**
     * The prevResult converted to the config's version; one without a cniVersion of its own is
     * taken to be of the config's version, as Go's ParsePrevResult injects it.
     */
    private static Result prevResult(Map<String, Object> conf, CniVersion version) {
        Map<String, Object> pr = Fields.object(conf, "prevResult", "");
        if (pr == null) return null;
        String own = Fields.string(pr, "cniVersion", "prevResult");
        if (own == null || own.isEmpty()) {
            pr = new LinkedHashMap<>(pr);
            pr.keySet().removeIf(k -> Fields.names(k, "cniVersion"));
            pr.put("cniVersion", version.toString());
        }
        return Result.fromJson(Result.convert(pr, version.toString()));
    }

    private static Outcome failure(CniException e, String confVersion) {
        String v = confVersion == null || confVersion.isEmpty() ? CniVersion.CURRENT.toString() : confVersion;
        return new Outcome(Json.writePretty(e.toJson(v)), 1);
    }

    private static CniCommand command(Map<String, String> env) {
        String c = env.get("CNI_COMMAND");
        if (c == null || c.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "required env variables [CNI_COMMAND] missing");
        }
        CniCommand cmd = CniCommand.of(c);
        if (cmd == null) throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "unknown CNI_COMMAND: " + c);
        return cmd;
    }

    /** The reference's skel checks every command's network name (code 7) before the plugin runs. */
    private static void checkNetworkName(Map<String, Object> conf) {
        Names.checkNetworkName(Fields.string(conf, "name", ""));
    }

    /**
     * GC without the list of valid attachments would find every attachment stale: refuse before any
     * plugin acts, so that no plugin of a chain removes anything (and a malformed list fails here too).
     */
    private static void requireValidAttachments(PluginRequest req) {
        if (req.conf().get(Attachment.VALID_ATTACHMENTS_KEY) == null) {  // absent, or null
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing '" + Attachment.VALID_ATTACHMENTS_KEY + "'",
                    "GC needs the list of valid attachments; without it every attachment would look stale");
        }
        req.validAttachments();
    }

    static List<String> splitPath(String p) {
        List<String> out = new ArrayList<>();
        if (p == null) return out;
        for (String s : p.split(":")) if (!s.isEmpty()) out.add(s);
        return out;
    }
}
