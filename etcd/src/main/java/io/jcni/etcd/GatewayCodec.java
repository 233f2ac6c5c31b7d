package io.jcni.etcd;

import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The gateway's encoding: keys and values in base64, int64 as JSON strings that proto3 leaves
 * out when zero, and the pieces of a transaction request the calls share.
 */
final class GatewayCodec {
    private GatewayCodec() {}

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static String unb64(Object s) {
        return s == null ? "" : new String(Base64.getDecoder().decode((String) s), StandardCharsets.UTF_8);
    }

    /** int64 fields come as strings; absent means 0. */
    static long num(Object v) {
        if (v == null) return 0;
        if (v instanceof Number n) return n.longValue();
        return Long.parseLong(v.toString());
    }

    static long revision(Map<String, Object> r) {
        return r.get("header") instanceof Map<?, ?> h ? num(Json.asObject(h).get("revision")) : 0;
    }

    /** The smallest key greater than every key with this prefix (etcd's range_end for a prefix); keys are ASCII paths. */
    static String prefixEnd(String prefix) {
        for (int i = prefix.length() - 1; i >= 0; i--) {
            char c = prefix.charAt(i);
            if (c >= 0x7f) throw new IllegalArgumentException("non-ASCII etcd key prefix: " + prefix);
            if (c < 0x7e) return prefix.substring(0, i) + (char) (c + 1);
        }
        return "\0";
    }

    /** A transaction compare: {@code field} of {@code key} ({@code target}) equal to {@code v}. */
    static Map<String, Object> compare(String key, String target, String field, long v) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("result", "EQUAL");
        c.put("target", target);
        c.put("key", b64(key));
        c.put(field, Long.toString(v));
        return c;
    }

    /** A PutRequest; a lease of 0 is none. */
    static Map<String, Object> putRequest(String key, String value, long lease) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("key", b64(key));
        p.put("value", b64(value));
        if (lease != 0) p.put("lease", Long.toString(lease));
        return p;
    }
}
