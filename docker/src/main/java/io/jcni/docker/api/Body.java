package io.jcni.docker.api;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Typed reads from a decoded request object. Every failure names the field, so a bad payload is
 * answered "Join: SandboxKey: expected a string" rather than with a stack trace.
 */
public record Body(String call, Map<String, Object> fields) {

    /** Docker IDs are 64 hex digits; anything used as a file name or CNI container ID must be at least this tame. */
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

    public DriverException bad(String field, String problem) {
        return new DriverException(call + ": " + field + ": " + problem);
    }

    public boolean has(String key) {
        return fields.get(key) != null;
    }

    /** A string; absent or null reads as "". */
    public String string(String key) {
        Object v = fields.get(key);
        if (v == null) return "";
        if (v instanceof String s) return s;
        throw bad(key, "expected a string");
    }

    public String requiredString(String key) {
        String s = string(key);
        if (s.isEmpty()) throw bad(key, "missing");
        return s;
    }

    /** A Docker network, endpoint or pool ID. */
    public String id(String key) {
        String s = requiredString(key);
        if (!ID.matcher(s).matches()) throw bad(key, "not an ID (letters, digits, '_', '.', '-'; at most 128): \"" + s + "\"");
        return s;
    }

    public boolean bool(String key) {
        Object v = fields.get(key);
        if (v == null) return false;
        if (v instanceof Boolean b) return b;
        throw bad(key, "expected true or false");
    }

    /** An object; absent or null reads as empty. */
    public Body object(String key) {
        Object v = fields.get(key);
        if (v == null) return new Body(call + ": " + key, Map.of());
        if (v instanceof Map<?, ?> m) return new Body(call + ": " + key, cast(m));
        throw bad(key, "expected an object");
    }

    /** Docker's map[string]string options; absent or null reads as empty. */
    public Map<String, String> stringMap(String key) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : object(key).fields().entrySet()) {
            if (e.getValue() == null) continue;
            if (!(e.getValue() instanceof String s)) throw bad(key + "." + e.getKey(), "expected a string");
            out.put(e.getKey(), s);
        }
        return out;
    }

    /** A list of objects; absent or null reads as empty. */
    public List<Body> objects(String key) {
        Object v = fields.get(key);
        if (v == null) return List.of();
        if (!(v instanceof List<?> l)) throw bad(key, "expected a list");
        List<Body> out = new ArrayList<>();
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof Map<?, ?> m)) throw bad(key + "[" + i + "]", "expected an object");
            out.add(new Body(call + ": " + key + "[" + i + "]", cast(m)));
        }
        return out;
    }

    /** An integer in [min, max]; absent reads as dflt. */
    public long integer(String key, long min, long max, long dflt) {
        Object v = fields.get(key);
        if (v == null) return dflt;
        if (!(v instanceof Long n) || n < min || n > max) throw bad(key, "expected an integer in [" + min + ", " + max + "]");
        return n;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Map<?, ?> m) {
        return (Map<String, Object>) m;
    }
}
