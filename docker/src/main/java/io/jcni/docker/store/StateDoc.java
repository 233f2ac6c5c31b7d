package io.jcni.docker.store;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Typed reads from one stored document. Every failure is a {@link DamagedStateException} naming the
 * file and the field, so a truncated or hand-edited file is reported as such instead of surfacing
 * as a bare NullPointerException or ClassCastException at start-up.
 *
 * @param location where the document lives (a path, for messages)
 * @param path     the field path inside the document ("" for the top level, "subnets[1]" below it)
 */
public record StateDoc(String location, String path, Map<String, Object> fields) {

    public static StateDoc of(String location, Map<String, Object> fields) {
        return new StateDoc(location, "", fields);
    }

    public DamagedStateException damaged(String key, String problem) {
        return new DamagedStateException(location, (path.isEmpty() ? "" : path + ".") + key + ": " + problem);
    }

    public String string(String key) {
        String s = optString(key);
        if (s == null) throw damaged(key, "missing");
        return s;
    }

    /** A string, or null when absent. */
    public String optString(String key) {
        Object v = fields.get(key);
        if (v == null) return null;
        if (v instanceof String s) return s;
        throw damaged(key, "expected a string");
    }

    public boolean bool(String key) {
        if (fields.get(key) instanceof Boolean b) return b;
        throw damaged(key, fields.containsKey(key) ? "expected true or false" : "missing");
    }

    /** An optional flag: absent reads as dflt. */
    public boolean bool(String key, boolean dflt) {
        return fields.get(key) == null ? dflt : bool(key);
    }

    /** A whole number in [min, max]; absent reads as dflt. */
    public long integer(String key, long min, long max, long dflt) {
        Object v = fields.get(key);
        if (v == null) return dflt;
        if (!(v instanceof Long n) || n < min || n > max) throw damaged(key, "expected a whole number in [" + min + ", " + max + "]");
        return n;
    }

    public long integer(String key, long min, long max) {
        if (fields.get(key) == null) throw damaged(key, "missing");
        return integer(key, min, max, 0);
    }

    public Cidr cidr(String key) {
        Cidr c = optCidr(key);
        if (c == null) throw damaged(key, "missing");
        return c;
    }

    public Cidr optCidr(String key) {
        String s = optString(key);
        if (s == null) return null;
        Cidr c = Cidr.tryParse(s);
        if (c == null) throw damaged(key, "not a CIDR: " + s);
        return c;
    }

    /** A list of strings; absent reads as empty. */
    public List<String> strings(String key) {
        List<String> out = new ArrayList<>();
        List<?> l = list(key);
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof String s)) throw damaged(key + "[" + i + "]", "expected a string");
            out.add(s);
        }
        return out;
    }

    /** A list of addresses; absent reads as empty. */
    public List<IpAddr> addresses(String key) {
        List<IpAddr> out = new ArrayList<>();
        List<String> l = strings(key);
        for (int i = 0; i < l.size(); i++) {
            IpAddr a = IpAddr.tryParse(l.get(i));
            if (a == null) throw damaged(key + "[" + i + "]", "not an IP address: " + l.get(i));
            out.add(a);
        }
        return out;
    }

    /** A list of objects; absent reads as empty. */
    public List<StateDoc> objects(String key) {
        List<StateDoc> out = new ArrayList<>();
        List<?> l = list(key);
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof Map<?, ?> m)) throw damaged(key + "[" + i + "]", "expected an object");
            out.add(new StateDoc(location, (path.isEmpty() ? "" : path + ".") + key + "[" + i + "]", cast(m)));
        }
        return out;
    }

    /** An object kept as it is (a copied conflist); null when absent. */
    public Map<String, Object> optObject(String key) {
        Object v = fields.get(key);
        if (v == null) return null;
        if (v instanceof Map<?, ?> m) return cast(m);
        throw damaged(key, "expected an object");
    }

    private List<?> list(String key) {
        Object v = fields.get(key);
        if (v == null) return List.of();
        if (v instanceof List<?> l) return l;
        throw damaged(key, "expected a list");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Map<?, ?> m) {
        return (Map<String, Object>) m;
    }
}
