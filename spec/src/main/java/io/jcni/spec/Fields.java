package io.jcni.spec;

import java.util.List;
import java.util.Map;

/**
 * Typed reads from a JSON object that fail with a CNI error naming the field, so a bad config
 * says "ipam.subnet: expected a string" instead of a ClassCastException.
 */
public final class Fields {
    private Fields() {}

    public static String string(Map<String, Object> m, String key, String where) {
        Object v = m.get(key);
        if (v == null) return null;
        if (v instanceof String s) return s;
        throw wrongType(where, key, "a string", v);
    }

    public static String requireString(Map<String, Object> m, String key, String where) {
        String s = string(m, key, where);
        if (s == null || s.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing '" + key + "'", path(where, key) + " is required");
        }
        return s;
    }

    /** Booleans may also be written "true"/"false", as libcni accepts for disableCheck and friends. */
    public static boolean bool(Map<String, Object> m, String key, String where, boolean dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Boolean b) return b;
        if (v instanceof String s) {
            if (s.equalsIgnoreCase("true")) return true;
            if (s.equalsIgnoreCase("false")) return false;
        }
        throw wrongType(where, key, "true or false", v);
    }

    public static Long integer(Map<String, Object> m, String key, String where) {
        Object v = m.get(key);
        if (v == null) return null;
        if (v instanceof Long l) return l;
        if (v instanceof Number n) {
            try {
                return new java.math.BigDecimal(n.toString()).longValueExact();
            } catch (ArithmeticException | NumberFormatException e) {
                throw wrongType(where, key, "an integer", v);
            }
        }
        throw wrongType(where, key, "an integer", v);
    }

    public static Map<String, Object> object(Map<String, Object> m, String key, String where) {
        Object v = m.get(key);
        if (v == null) return null;
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw wrongType(where, key, "an object", v);
    }

    public static List<Object> list(Map<String, Object> m, String key, String where) {
        Object v = m.get(key);
        if (v == null) return null;
        if (v instanceof List<?>) return Json.asList(v);
        throw wrongType(where, key, "a list", v);
    }

    public static List<String> stringList(Map<String, Object> m, String key, String where) {
        List<Object> l = list(m, key, where);
        if (l == null) return null;
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof String)) throw wrongType(where, key + "[" + i + "]", "a string", l.get(i));
        }
        @SuppressWarnings("unchecked")
        List<String> out = (List<String>) (List<?>) l;
        return out;
    }

    /** One element of a list that must be an object; {@code where} names it, e.g. "ipam.routes[2]". */
    public static Map<String, Object> element(Object v, String where) {
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + where + "'", "expected an object");
    }

    public static String path(String where, String key) {
        return where == null || where.isEmpty() ? key : where + "." + key;
    }

    private static CniException wrongType(String where, String key, String expected, Object got) {
        return new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + path(where, key) + "'",
                "expected " + expected + ", got " + typeName(got));
    }

    static String typeName(Object v) {
        return switch (v) {
            case null -> "null";
            case String s -> "string";
            case Boolean b -> "boolean";
            case Number n -> "number";
            case Map<?, ?> m -> "object";
            case List<?> l -> "list";
            default -> v.getClass().getSimpleName();
        };
    }
}
