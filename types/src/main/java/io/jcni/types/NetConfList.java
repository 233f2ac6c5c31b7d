package io.jcni.types;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A network configuration (a "conflist"): a name, a version and an ordered chain of plugins.
 *
 * @param cniVersion the version the runtime speaks to the plugins: the highest of {@code cniVersion}
 *     and {@code cniVersions} that this implementation supports
 * @param source where it was read from (a file path), for error messages; may be null
 */
public record NetConfList(String name, String cniVersion, boolean disableCheck, boolean disableGC,
                          boolean loadOnlyInlinedPlugins, List<PluginConf> plugins, Map<String, Object> raw,
                          String source) implements Json.JsonWritable {

    /** The spec: starts with an alphanumeric, then alphanumerics, '_', '.' or '-'. */

    public NetConfList {
        plugins = List.copyOf(plugins);
    }

    /** Parses a .conflist document. Plugins may be absent only when more come from the config dir. */
    public static NetConfList parse(String text, String source) {
        Map<String, Object> raw = parseJson(text, source);
        return fromMap(raw, source);
    }

    /**
     * Parses a legacy single-plugin .conf (or .json) file and lifts it into a one-plugin list, as
     * libcni's ConfListFromConf does; the plugin keeps all of its keys.
     */
    public static NetConfList parseSingle(String text, String source) {
        Map<String, Object> raw = parseJson(text, source);
        String where = source == null ? "" : source;
        // libcni decodes a .conf into types.NetConf, a struct: its keys fold (Fields).
        String name = requireName(Fields.string(raw, "name", where), where);
        String version = Fields.string(raw, "cniVersion", where);
        PluginConf plugin = PluginConf.parse(raw, where);
        Map<String, Object> list = new LinkedHashMap<>();
        list.put("cniVersion", version == null ? "" : version);
        list.put("name", name);
        list.put("plugins", new ArrayList<>(List.of(plugin.raw())));
        return fromMap(list, source);
    }

    /** libcni reads a conflist's own keys from a {@code map[string]interface{}}: exact keys ({@link Fields.Exact}). */
    static NetConfList fromMap(Map<String, Object> raw, String source) {
        String where = source == null ? "" : source;
        String name = requireName(Fields.Exact.string(raw, "name", where), where);
        String version = effectiveVersion(raw, where);
        boolean disableCheck = Fields.Exact.boolOrString(raw, "disableCheck", where, false);
        boolean disableGC = Fields.Exact.boolOrString(raw, "disableGC", where, false);
        boolean onlyInlined = Fields.Exact.boolOrString(raw, "loadOnlyInlinedPlugins", where, false);
        List<Object> rawPlugins = Fields.Exact.list(raw, "plugins", where);
        List<PluginConf> plugins = new ArrayList<>();
        if (rawPlugins == null) {
            if (onlyInlined) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid configuration list",
                        where + ": 'loadOnlyInlinedPlugins' is true and there is no 'plugins' key");
            }
        } else {
            if (rawPlugins.isEmpty()) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid configuration list", Fields.path(where, "plugins") + ": no plugins in list");
            }
            for (int i = 0; i < rawPlugins.size(); i++) {
                String w = Fields.path(where, "plugins[" + i + "]");
                plugins.add(PluginConf.parse(Fields.element(rawPlugins.get(i), w), w));
            }
        }
        return new NetConfList(name, version, disableCheck, disableGC, onlyInlined, plugins, raw, source);
    }

    /** This list with plugins loaded from elsewhere appended (libcni: {@code <dir>/<network>/*.conf}). */
    public NetConfList withExtraPlugins(List<PluginConf> extra) {
        if (extra.isEmpty()) return this;
        List<PluginConf> all = new ArrayList<>(plugins);
        all.addAll(extra);
        return new NetConfList(name, cniVersion, disableCheck, disableGC, loadOnlyInlinedPlugins, all, raw, source);
    }

    public CniVersion version() {
        return CniVersion.parse(cniVersion);
    }

    @Override
    public Map<String, Object> toJson() {
        return raw;
    }

    private static Map<String, Object> parseJson(String text, String source) {
        try {
            return Json.parseObject(text);
        } catch (Json.JsonException e) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "error parsing configuration",
                    (source == null ? "" : source + ": ") + e.getMessage(), e);
        }
    }

    private static String requireName(String name, String where) {
        if (name == null || name.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing 'name'", Fields.path(where, "name") + " is required");
        }
        if (!Names.isCniName(name)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'name'",
                    Fields.path(where, "name") + " \"" + name + "\" must start with a letter or digit and hold only letters, digits, '_', '.' and '-'");
        }
        return name;
    }

    /**
     * The highest version among {@code cniVersion} and {@code cniVersions} that we support; versions
     * newer than ours are skipped (libcni does the same), anything malformed or older-but-unknown is an
     * error naming the field.
     */
    private static String effectiveVersion(Map<String, Object> raw, String where) {
        String single = Fields.Exact.string(raw, "cniVersion", where);
        List<String> many = Fields.Exact.stringList(raw, "cniVersions", where);
        CniVersion best = null;
        if (single != null && !single.isEmpty()) best = checkVersion(single, Fields.path(where, "cniVersion"), many != null);
        if (many != null) {
            for (int i = 0; i < many.size(); i++) {
                CniVersion v = checkVersion(many.get(i), Fields.path(where, "cniVersions[" + i + "]"), true);
                if (v != null && (best == null || v.compareTo(best) > 0)) best = v;
            }
        }
        if (best == null) {
            if (single == null || single.isEmpty()) {
                if (many == null) return "";
                throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "incompatible CNI versions",
                        Fields.path(where, "cniVersions") + " names no version this runtime supports " + CniVersion.supportedStrings());
            }
        }
        return best == null ? single : best.toString();
    }

    private static CniVersion checkVersion(String s, String field, boolean skipNewer) {
        CniVersion v;
        try {
            v = CniVersion.parse(s);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "invalid CNI version", field + ": " + e.getMessage(), e);
        }
        if (v.isSupported()) return v;
        if (skipNewer && v.compareTo(CniVersion.CURRENT) > 0) return null;
        throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "incompatible CNI versions",
                field + " \"" + s + "\" is not supported; supported: " + CniVersion.supportedStrings());
    }
}
