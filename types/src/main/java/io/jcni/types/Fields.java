package io.jcni.types;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * The config reader: typed reads of a JSON object's keys with the semantics of Go's
 * {@code encoding/json} decoding into a struct field, because that is how every reference plugin,
 * libcni and go-cni's runtimes read the same bytes (docs/config-decoding.md lists each rule):
 *
 * <ul>
 *   <li>a key names the field when it equals the field's JSON name or, failing that, equals it under
 *       Go's case folding (ASCII letters, plus U+212A KELVIN SIGN for k and U+017F LONG S for s), so
 *       go-cni's untagged {@code "HostPort"} fills {@code hostPort};</li>
 *   <li>keys are applied in document order, so of several matching keys the last one wins; a
 *       {@code null} value leaves the field as it was (absent, or the earlier key's value); every
 *       matching non-null value must have the right type, even one a later key overrides;</li>
 *   <li>integers come only from integral literals within 64 bits ({@code 1500.0} and {@code 1e3}
 *       are refused as Go refuses them for an int field); booleans only from {@code true}/{@code false};</li>
 *   <li>keys that name no field are ignored.</li>
 * </ul>
 *
 * Failures are CNI errors naming the field ("ipam.subnet: expected a string"), never a
 * ClassCastException. Keys of what Go decodes as a {@code map[string]...} (tuning's sysctl, a
 * conflist's top level in libcni) are exact: read those with {@link Exact}.
 */
public final class Fields {
    private Fields() {}

    public static String string(Map<String, Object> m, String key, String where) {
        return asString(lookup(m, key, true, where, Kind.STRING));
    }

    public static String requireString(Map<String, Object> m, String key, String where) {
        String s = string(m, key, where);
        if (s == null || s.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing '" + key + "'", path(where, key) + " is required");
        }
        return s;
    }

    public static boolean bool(Map<String, Object> m, String key, String where, boolean dflt) {
        Boolean b = bool(m, key, where);
        return b == null ? dflt : b;
    }

    /** A Go {@code *bool}: null when no key sets it. */
    public static Boolean bool(Map<String, Object> m, String key, String where) {
        return (Boolean) lookup(m, key, true, where, Kind.BOOL);
    }

    /** A Go integer field: an integral literal within 64 bits, or null when no key sets it. */
    public static Long integer(Map<String, Object> m, String key, String where) {
        return toLong(lookup(m, key, true, where, Kind.INTEGER), where, key);
    }

    public static Map<String, Object> object(Map<String, Object> m, String key, String where) {
        Object v = lookup(m, key, true, where, Kind.OBJECT);
        return v == null ? null : Json.asObject(v);
    }

    public static List<Object> list(Map<String, Object> m, String key, String where) {
        Object v = lookup(m, key, true, where, Kind.LIST);
        return v == null ? null : Json.asList(v);
    }

    public static List<String> stringList(Map<String, Object> m, String key, String where) {
        return strings(list(m, key, where), where, key);
    }

    /** The raw value a field would be decoded from (any JSON type), or null. */
    public static Object value(Map<String, Object> m, String key) {
        return lookup(m, key, true, "", Kind.ANY);
    }

    /**
     * Whether any key names the field, even with a {@code null} value: Go allocates an embedded
     * struct pointer (bandwidth's {@code *BandwidthEntry}) as soon as one of its keys appears.
     */
    public static boolean present(Map<String, Object> m, String key) {
        for (String k : m.keySet()) if (names(k, key)) return true;
        return false;
    }

    /** One element of a list that must be an object; {@code where} names it, e.g. "ipam.routes[2]". */
    public static Map<String, Object> element(Object v, String where) {
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + where + "'", "expected an object, got " + typeName(v));
    }

    public static String path(String where, String key) {
        return where == null || where.isEmpty() ? key : where + "." + key;
    }

    /**
     * Whether JSON key {@code key} fills the struct field named {@code field}: equal, or equal under
     * Go's fold. The field names jcni reads are ASCII, so only two non-ASCII runes can fold onto
     * them: U+212A onto k and U+017F onto s (Go 1.19's equalFoldRight and 1.21's foldName agree).
     */
    public static boolean names(String key, String field) {
        if (key.equals(field)) return true;
        if (key.length() != field.length()) return false;
        for (int i = 0; i < key.length(); i++) {
            char k = key.charAt(i), f = field.charAt(i);
            if (k == f) continue;
            char lf = asciiLower(f);
            if (k < 0x80) {
                if (asciiLower(k) != lf || !isAsciiLetter(k)) return false;
            } else if (!(k == '\u212A' && lf == 'k') && !(k == '\u017F' && lf == 's')) {
                return false;
            }
        }
        return true;
    }

    /** Reads with exact keys, for what Go decodes as {@code map[string]interface{}} (libcni's conflist level). */
    public static final class Exact {
        private Exact() {}

        public static String string(Map<String, Object> m, String key, String where) {
            return asString(lookup(m, key, false, where, Kind.STRING));
        }

        public static List<Object> list(Map<String, Object> m, String key, String where) {
            Object v = lookup(m, key, false, where, Kind.LIST);
            return v == null ? null : Json.asList(v);
        }

        public static List<String> stringList(Map<String, Object> m, String key, String where) {
            return strings(list(m, key, where), where, key);
        }

        /** libcni's disableCheck/disableGC: a boolean, or the string "true"/"false" in any case. */
        public static boolean boolOrString(Map<String, Object> m, String key, String where, boolean dflt) {
            Object v = m.get(key);
            if (v == null) return dflt;
            if (v instanceof Boolean b) return b;
            if (v instanceof String s) {
                if (s.equalsIgnoreCase("true")) return true;
                if (s.equalsIgnoreCase("false")) return false;
            }
            throw wrongType(where, key, "true or false", v);
        }
    }

    private enum Kind { STRING, BOOL, INTEGER, OBJECT, LIST, ANY }

    /** The last non-null value of a key naming the field, each such value checked against {@code kind}. */
    private static Object lookup(Map<String, Object> m, String key, boolean fold, String where, Kind kind) {
        if (!fold) {
            Object v = m.get(key);
            check(v, kind, where, key);
            return v;
        }
        Object found = null;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (e.getValue() == null || !names(e.getKey(), key)) continue;
            check(e.getValue(), kind, where, key);
            found = e.getValue();
        }
        return found;
    }

    private static void check(Object v, Kind kind, String where, String key) {
        if (v == null) return;
        switch (kind) {
            case STRING -> { if (!(v instanceof String)) throw wrongType(where, key, "a string", v); }
            case BOOL -> { if (!(v instanceof Boolean)) throw wrongType(where, key, "true or false", v); }
            case INTEGER -> toLong(v, where, key);
            case OBJECT -> { if (!(v instanceof Map<?, ?>)) throw wrongType(where, key, "an object", v); }
            case LIST -> { if (!(v instanceof List<?>)) throw wrongType(where, key, "a list", v); }
            case ANY -> { }
        }
    }

    private static String asString(Object v) {
        return (String) v;
    }

    /** Pattern switches are avoided here for start-up's sake (Json.write says why). */
    private static Long toLong(Object v, String where, String key) {
        if (v == null) return null;
        if (v instanceof Long l) return l;
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) return ((Number) v).longValue();
        if (v instanceof BigInteger b) {
            throw new CniException(ErrorCode.DECODING_FAILURE,
                    "invalid value for '" + path(where, key) + "'", "number " + b + " does not fit in 64 bits");
        }
        if (v instanceof Number n) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + path(where, key) + "'",
                    "expected an integer, got number " + n + " (write integers without a fraction or exponent)");
        }
        throw wrongType(where, key, "an integer", v);
    }

    private static List<String> strings(List<Object> l, String where, String key) {
        if (l == null) return null;
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof String)) throw wrongType(where, key + "[" + i + "]", "a string", l.get(i));
        }
        @SuppressWarnings("unchecked")
        List<String> out = (List<String>) (List<?>) l;
        return out;
    }

    private static char asciiLower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
    }

    private static boolean isAsciiLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static CniException wrongType(String where, String key, String expected, Object got) {
        return new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + path(where, key) + "'",
                "expected " + expected + ", got " + typeName(got));
    }

    static String typeName(Object v) {
        if (v == null) return "null";
        if (v instanceof String) return "string";
        if (v instanceof Boolean) return "boolean";
        if (v instanceof Number) return "number";
        if (v instanceof Map<?, ?>) return "object";
        if (v instanceof List<?>) return "list";
        return v.getClass().getSimpleName();
    }
}
