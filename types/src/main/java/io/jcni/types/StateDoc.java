package io.jcni.types;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The state reader: typed reads of one JSON document jcni wrote earlier (an nft ownership
 * record, a DHCP lease, the Docker driver's networks, endpoints and pools, in files or in etcd). Unlike {@link Fields}, which reads what a user wrote with Go's rules and
 * answers with CNI error codes, this reads what jcni itself wrote, so anything unexpected means
 * the file was damaged (a crash of a filesystem without a journal, a truncated copy, a hand edit):
 * every failure is a {@link DamagedStateException} naming the file and the field. Callers decide
 * what damage means for them (skip, quarantine), never a ClassCastException deep in a DEL.
 *
 * <p>A final class, not a record: records link their equals/hashCode/toString at run time, which
 * spins classes on the standalone plugin path (plugins/README.md, StartupRulesTest).
 */
public final class StateDoc {
    private final String location;
    private final String path;
    private final Map<String, Object> fields;

    private StateDoc(String location, String path, Map<String, Object> fields) {
        this.location = location;
        this.path = path;
        this.fields = fields;
    }

    /**
     * Parses {@code text}, the content of the file at {@code location}.
     *
     * @throws DamagedStateException when it is empty, not JSON, or not a JSON object
     */
    public static StateDoc parse(String location, String text) {
        if (text.isBlank()) throw new DamagedStateException(location, "empty");
        Object v;
        try {
            v = Json.parse(text);
        } catch (Json.JsonException e) {
            throw new DamagedStateException(location, "not JSON (" + e.getMessage() + ")");
        } catch (RuntimeException e) {
            // Json refuses some inputs with other exceptions (deep nesting): damage all the same.
            throw new DamagedStateException(location, "not JSON (" + e + ")");
        }
        if (!(v instanceof Map<?, ?> m)) throw new DamagedStateException(location, "not a JSON object");
        return new StateDoc(location, "", cast(m));
    }

    /** A document already parsed (e.g. from a store that keeps maps). */
    public static StateDoc of(String location, Map<String, Object> fields) {
        return new StateDoc(location, "", fields);
    }

    public String location() {
        return location;
    }

    public Map<String, Object> fields() {
        return fields;
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

    /** An optional flag: absent reads as {@code dflt}. */
    public boolean bool(String key, boolean dflt) {
        return fields.get(key) == null ? dflt : bool(key);
    }

    /** A whole number in [min, max]. */
    public long integer(String key, long min, long max) {
        if (fields.get(key) == null) throw damaged(key, "missing");
        return integer(key, min, max, 0);
    }

    /** A whole number in [min, max]; absent reads as {@code dflt}. */
    public long integer(String key, long min, long max, long dflt) {
        Object v = fields.get(key);
        if (v == null) return dflt;
        if (!(v instanceof Long n) || n < min || n > max) throw damaged(key, "expected a whole number in [" + min + ", " + max + "]");
        return n;
    }

    public Cidr cidr(String key) {
        Cidr c = optCidr(key);
        if (c == null) throw damaged(key, "missing");
        return c;
    }

    /** A CIDR, or null when absent. */
    public Cidr optCidr(String key) {
        String s = optString(key);
        if (s == null) return null;
        Cidr c = Cidr.tryParse(s);
        if (c == null) throw damaged(key, "not a CIDR: " + s);
        return c;
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

    /** A list of strings; absent reads as empty. */
    public List<String> strings(String key) {
        return strings(key, list(key));
    }

    /** A list of whole numbers in [min, max]; absent reads as empty. */
    public List<Long> integers(String key, long min, long max) {
        List<Long> out = new ArrayList<>();
        List<?> l = list(key);
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof Long n) || n < min || n > max) {
                throw damaged(key + "[" + i + "]", "expected a whole number in [" + min + ", " + max + "]");
            }
            out.add(n);
        }
        return out;
    }

    /** A list of lists of strings (tuples, e.g. an nft element's set, key and value); absent reads as empty. */
    public List<List<String>> stringLists(String key) {
        List<List<String>> out = new ArrayList<>();
        List<?> l = list(key);
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof List<?> inner)) throw damaged(key + "[" + i + "]", "expected a list");
            out.add(strings(key + "[" + i + "]", inner));
        }
        return out;
    }

    /** An object; absent reads as empty. */
    public StateDoc object(String key) {
        Map<String, Object> m = optObject(key);
        return new StateDoc(location, sub(key), m == null ? Map.of() : m);
    }

    /** An object kept as it is (e.g. a copied conflist), or null when absent. */
    public Map<String, Object> optObject(String key) {
        Object v = fields.get(key);
        if (v == null) return null;
        if (v instanceof Map<?, ?> m) return cast(m);
        throw damaged(key, "expected an object");
    }

    /** A list of objects; absent reads as empty. */
    public List<StateDoc> objects(String key) {
        List<StateDoc> out = new ArrayList<>();
        List<?> l = list(key);
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof Map<?, ?> m)) throw damaged(key + "[" + i + "]", "expected an object");
            out.add(new StateDoc(location, sub(key + "[" + i + "]"), cast(m)));
        }
        return out;
    }

    /** The keys of this object, in document order. */
    public List<String> keys() {
        return List.copyOf(fields.keySet());
    }

    private List<String> strings(String key, List<?> l) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < l.size(); i++) {
            if (!(l.get(i) instanceof String s)) throw damaged(key + "[" + i + "]", "expected a string");
            out.add(s);
        }
        return out;
    }

    private List<?> list(String key) {
        Object v = fields.get(key);
        if (v == null) return List.of();
        if (v instanceof List<?> l) return l;
        throw damaged(key, "expected a list");
    }

    private String sub(String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Map<?, ?> m) {
        return (Map<String, Object>) m;
    }
}
