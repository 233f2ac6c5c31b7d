package io.jcni.spec;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One plugin's configuration object. The raw JSON map is the source of truth: keys we do not know
 * are passed to the plugin untouched; the accessors read the well-known ones.
 */
public record PluginConf(Map<String, Object> raw) implements Json.JsonWritable {

    private static final Pattern TYPE_CHARS = Pattern.compile("[^/\\\\]+");

    public PluginConf {
        raw = raw == null ? new LinkedHashMap<>() : raw;
    }

    /** Validates a plugin object from a conflist's {@code plugins} array or a legacy .conf file. */
    public static PluginConf parse(Map<String, Object> raw, String where) {
        String type = Fields.string(raw, "type", where);
        if (type == null || type.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing 'type'", Fields.path(where, "type") + " is required");
        }
        if (!TYPE_CHARS.matcher(type).matches() || type.equals(".") || type.equals("..")) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'type'",
                    Fields.path(where, "type") + " \"" + type + "\" must be a file name without path separators");
        }
        Fields.object(raw, "capabilities", where);
        Fields.object(raw, "ipam", where);
        Fields.object(raw, "dns", where);
        return new PluginConf(raw);
    }

    public String type() {
        return (String) raw.get("type");
    }

    public String name() {
        return raw.get("name") instanceof String s ? s : null;
    }

    public String cniVersion() {
        return raw.get("cniVersion") instanceof String s ? s : null;
    }

    /** The capabilities this plugin declares with {@code true}; runtimeConfig only ever carries these. */
    public Map<String, Object> capabilities() {
        Map<String, Object> c = Fields.object(raw, "capabilities", type());
        return c == null ? Map.of() : c;
    }

    public boolean hasCapability(String cap) {
        return Boolean.TRUE.equals(capabilities().get(cap));
    }

    public Map<String, Object> ipam() {
        return Fields.object(raw, "ipam", type());
    }

    @Override
    public Map<String, Object> toJson() {
        return raw;
    }
}
