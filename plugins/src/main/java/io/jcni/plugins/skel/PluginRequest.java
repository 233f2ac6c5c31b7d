package io.jcni.plugins.skel;

import io.jcni.runtime.Delegator;
import io.jcni.types.Attachment;
import io.jcni.types.CniArgs;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything a plugin is given for one call: the CNI_* environment and the config from stdin.
 *
 * @param netns may be empty on DEL (the container may be gone), and on GC/STATUS
 * @param path the directories of CNI_PATH, where delegate plugins are found
 * @param stdin the config bytes exactly as received, for delegating to IPAM plugins
 * @param conf the parsed config
 * @param prevResult the previous plugin's result, converted to {@code version}, or null
 * @param context the delegator and log the caller of the skeleton supplied
 */
public record PluginRequest(CniCommand command, String containerId, String netns, String ifname, CniArgs args,
                            List<String> path, byte[] stdin, Map<String, Object> conf, CniVersion version,
                            Result prevResult, Map<String, String> env, PluginContext context) {

    /** Runs delegate plugins (IPAM) for this call. */
    public Delegator delegator() {
        return context.delegator();
    }

    /** This call's phase clock: {@code Phase prev = req.phases().enter(Phase.NFT); try {...} finally { req.phases().enter(prev); }}. */
    public Phases phases() {
        return context.phases();
    }

    /** This call's stderr, for diagnostics. */
    public PrintStream log() {
        return context.log();
    }

    public String networkName() {
        String name = Fields.string(conf, "name", "");
        return name == null ? "" : name;
    }

    /** The config's {@code runtimeConfig}, or an empty map. */
    public Map<String, Object> runtimeConfig() {
        Map<String, Object> rc = Fields.object(conf, "runtimeConfig", "");
        return rc == null ? Map.of() : rc;
    }

    /** GC's list of attachments that are still in use; empty when the runtime sent none. */
    public List<Attachment> validAttachments() {
        List<Object> raw = Fields.list(conf, Attachment.VALID_ATTACHMENTS_KEY, "");
        List<Attachment> out = new ArrayList<>();
        if (raw == null) return out;
        for (Object o : raw) {
            if (!(o instanceof Map<?, ?> m)) {
                throw new CniException(ErrorCode.DECODING_FAILURE, "invalid " + Attachment.VALID_ATTACHMENTS_KEY, "expected objects");
            }
            out.add(Attachment.fromJson(Json.asObject(m)));
        }
        return out;
    }

    /** The prevResult a chained plugin needs; its absence is a config error. */
    public Result requirePrevResult() {
        if (prevResult == null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "must be called as chained plugin", "no prevResult in the config");
        }
        return prevResult;
    }
}
