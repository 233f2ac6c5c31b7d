package io.jcni.types;

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

    /**
     * Validates a plugin object from a conflist's {@code plugins} array or a legacy .conf file.
     * libcni decodes it into {@code types.NetConf}, a struct, so its keys fold ({@link Fields}).
     */
    public static PluginConf parse(Map<String, Object> raw, String where) {
        checkNetConf(raw, where);
        String type = Fields.string(raw, "type", where);
        if (type == null || type.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing 'type'", Fields.path(where, "type") + " is required");
        }
        if (!TYPE_CHARS.matcher(type).matches() || type.equals(".") || type.equals("..")) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'type'",
                    Fields.path(where, "type") + " \"" + type + "\" must be a file name without path separators");
        }
        return new PluginConf(raw);
    }

    /**
     * Fails as Go's {@code json.Unmarshal} into {@code types.NetConf} fails, which every reference
     * plugin does first: cniVersion, name and type strings, capabilities a map of booleans, ipam an
     * object whose type is a string, dns an object of string lists and a domain string, prevResult
     * an object. Skel calls it for every command but VERSION, so a plugin never ignores a
     * {@code "type": 5} that the Go plugin would refuse.
     */
    public static void checkNetConf(Map<String, Object> raw, String where) {
        Fields.string(raw, "cniVersion", where);
        Fields.string(raw, "name", where);
        Fields.string(raw, "type", where);
        Map<String, Object> caps = Fields.object(raw, "capabilities", where);
        if (caps != null) {
            for (Map.Entry<String, Object> e : caps.entrySet()) {
                if (e.getValue() != null && !(e.getValue() instanceof Boolean)) {
                    throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + Fields.path(where, "capabilities." + e.getKey()) + "'",
                            "expected true or false, got " + Fields.typeName(e.getValue()));
                }
            }
        }
        Map<String, Object> ipam = Fields.object(raw, "ipam", where);
        if (ipam != null) Fields.string(ipam, "type", Fields.path(where, "ipam"));
        Map<String, Object> dns = Fields.object(raw, "dns", where);
        if (dns != null) {
            String w = Fields.path(where, "dns");
            Fields.stringList(dns, "nameservers", w);
            Fields.string(dns, "domain", w);
            Fields.stringList(dns, "search", w);
            Fields.stringList(dns, "options", w);
        }
        Fields.object(raw, "prevResult", where);
    }

    public String type() {
        return Fields.string(raw, "type", "");
    }

    public String name() {
        return Fields.string(raw, "name", "");
    }

    public String cniVersion() {
        return Fields.string(raw, "cniVersion", "");
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
