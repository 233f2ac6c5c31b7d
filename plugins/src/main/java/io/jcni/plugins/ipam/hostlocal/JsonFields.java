package io.jcni.plugins.ipam.hostlocal;

import io.jcni.spec.Json;
import java.util.List;
import java.util.Map;

/**
 * Typed access to the maps produced by {@link Json}, mirroring Go's {@code encoding/json} rules
 * that the reference config relies on: keys match case-insensitively when there is no exact
 * match, and {@code null} means absent.
 */
final class JsonFields {
    private JsonFields() {}

    static Object get(Map<String, Object> obj, String key) {
        if (obj == null) return null;
        if (obj.containsKey(key)) return obj.get(key);
        for (Map.Entry<String, Object> e : obj.entrySet()) {
            if (e.getKey().equalsIgnoreCase(key)) return e.getValue();
        }
        return null;
    }

    static String string(Map<String, Object> obj, String key) {
        Object v = get(obj, key);
        if (v == null) return null;
        if (v instanceof String s) return s;
        throw typeError(key, v, "string");
    }

    static Map<String, Object> object(Map<String, Object> obj, String key) {
        Object v = get(obj, key);
        if (v == null) return null;
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw typeError(key, v, "object");
    }

    static List<Object> list(Map<String, Object> obj, String key) {
        Object v = get(obj, key);
        if (v == null) return null;
        if (v instanceof List<?>) return Json.asList(v);
        throw typeError(key, v, "array");
    }

    static Integer integer(Map<String, Object> obj, String key) {
        Object v = get(obj, key);
        if (v == null) return null;
        if (v instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) return l.intValue();
        throw typeError(key, v, "int"); // fractions and out-of-range numbers too, as Go's int
    }

    static Map<String, Object> asObject(Object v, String what) {
        if (v instanceof Map<?, ?>) return Json.asObject(v);
        throw typeError(what, v, "object");
    }

    static String asString(Object v, String what) {
        if (v instanceof String s) return s;
        throw typeError(what, v, "string");
    }

    static IpamException typeError(String key, Object v, String expected) {
        return new IpamException("json: cannot unmarshal " + jsonType(v) + " into field " + key + " of type " + expected);
    }

    private static String jsonType(Object v) {
        return switch (v) {
            case null -> "null";
            case String s -> "string";
            case Boolean b -> "bool";
            case Number n -> "number";
            case List<?> l -> "array";
            case Map<?, ?> m -> "object";
            default -> v.getClass().getSimpleName();
        };
    }
}
