package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Decodes what a plugin printed on success. */
final class ResultParser {
    private ResultParser() {}

    /**
     * Parses a result. As libcni does (containernetworking/cni#895), a result without a cniVersion is
     * taken to be in the config's version.
     */
    static Map<String, Object> parseJson(byte[] stdout, String confVersion, String plugin) {
        String text = new String(stdout, StandardCharsets.UTF_8).strip();
        if (text.isEmpty()) {
            throw new PluginException(plugin, ErrorCode.DECODING_FAILURE, "plugin " + plugin + " returned no result",
                    "it exited with status 0 and printed nothing on stdout", "");
        }
        Map<String, Object> m;
        try {
            m = Json.parseObject(text);
        } catch (Json.JsonException e) {
            throw new PluginException(plugin, ErrorCode.DECODING_FAILURE, "plugin " + plugin + " returned an invalid result",
                    e.getMessage() + "; stdout: " + ProcessPluginExec.abbreviate(text, 400), "");
        }
        // libcni decodes the version into a struct field: any spelling counts (Fields).
        if (!(Fields.value(m, "cniVersion") instanceof String v) || v.isEmpty()) {
            m.put("cniVersion", confVersion == null || confVersion.isEmpty() ? "0.1.0" : confVersion);
        }
        return m;
    }

    static Result parse(byte[] stdout, String confVersion, String plugin) {
        Map<String, Object> m = parseJson(stdout, confVersion, plugin);
        try {
            return Result.fromJson(m);
        } catch (CniException e) {
            throw new PluginException(plugin, "", e.code(), "plugin " + plugin + " returned an invalid result: " + e.msg(), e.details(), "");
        }
    }

    /** The cniVersion of a config document, or "" when it has none or is not JSON. */
    static String configVersion(byte[] stdin) {
        try {
            Object v = Json.parse(new String(stdin, StandardCharsets.UTF_8));
            if (v instanceof Map<?, ?> m && Fields.value(Json.asObject(m), "cniVersion") instanceof String s) return s;
        } catch (Json.JsonException ignored) {
            // no version
        }
        return "";
    }
}
