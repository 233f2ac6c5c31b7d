package io.jcni.docker.store;

import io.jcni.types.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A {@link SharedStore} in memory, for tests: versions count up like etcd's revisions, so
 * compare-and-swap conflicts happen as they would between hosts. {@link #conflicts} counts them.
 */
public final class MemorySharedStore implements SharedStore {
    private final Map<String, Versioned> docs = new TreeMap<>();
    private long revision;
    public int conflicts;

    private static String k(String kind, String key) {
        return kind + "/" + key;
    }

    @Override
    public synchronized Optional<Versioned> read(String kind, String key) {
        Versioned v = docs.get(k(kind, key));
        return v == null ? Optional.empty() : Optional.of(new Versioned(copy(v.doc()), v.version()));
    }

    @Override
    public synchronized boolean putIfVersion(String kind, String key, Map<String, Object> doc, long version) {
        Versioned v = docs.get(k(kind, key));
        if ((v == null ? 0 : v.version()) != version) {
            conflicts++;
            return false;
        }
        docs.put(k(kind, key), new Versioned(copy(doc), ++revision));
        return true;
    }

    @Override
    public synchronized boolean deleteIfVersion(String kind, String key, long version) {
        Versioned v = docs.get(k(kind, key));
        if (v == null || v.version() != version) return false;
        docs.remove(k(kind, key));
        return true;
    }

    @Override
    public void putLeased(String kind, String key, Map<String, Object> doc) {
        put(kind, key, doc);
    }

    @Override
    public Optional<Map<String, Object>> get(String kind, String key) {
        return read(kind, key).map(Versioned::doc);
    }

    @Override
    public synchronized void put(String kind, String key, Map<String, Object> doc) {
        docs.put(k(kind, key), new Versioned(copy(doc), ++revision));
    }

    @Override
    public synchronized void delete(String kind, String key) {
        docs.remove(k(kind, key));
    }

    @Override
    public synchronized List<String> keys(String kind) {
        List<String> out = new ArrayList<>();
        String p = kind + "/";
        for (String key : docs.keySet()) if (key.startsWith(p) && !key.substring(p.length()).contains("/")) out.add(key.substring(p.length()));
        return out;
    }

    @Override
    public String location(String kind, String key) {
        return "memory:" + k(kind, key);
    }

    @Override
    public String quarantine(String kind, String key) {
        return location(kind, key);
    }

    private static Map<String, Object> copy(Map<String, Object> d) {
        return Json.parseObject(Json.write(d));
    }
}
