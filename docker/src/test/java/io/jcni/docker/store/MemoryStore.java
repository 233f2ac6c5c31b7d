package io.jcni.docker.store;

import io.jcni.types.Json;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** A {@link StateStore} in memory, for tests; documents are copied in and out like files would be. */
public final class MemoryStore implements StateStore {
    private final Map<String, Map<String, Map<String, Object>>> kinds = new TreeMap<>();

    @Override
    public synchronized Optional<Map<String, Object>> get(String kind, String key) {
        Map<String, Object> d = kinds.getOrDefault(kind, Map.of()).get(key);
        return d == null ? Optional.empty() : Optional.of(copy(d));
    }

    @Override
    public synchronized void put(String kind, String key, Map<String, Object> doc) {
        kinds.computeIfAbsent(kind, k -> new TreeMap<>()).put(key, copy(doc));
    }

    @Override
    public synchronized void delete(String kind, String key) {
        kinds.getOrDefault(kind, new TreeMap<>()).remove(key);
    }

    @Override
    public synchronized List<String> keys(String kind) {
        return List.copyOf(kinds.getOrDefault(kind, new TreeMap<>()).keySet());
    }

    @Override
    public String location(String kind, String key) {
        return "memory:" + kind + "/" + key;
    }

    /** Documents moved aside, by their former location. */
    public final Map<String, Map<String, Object>> quarantined = new TreeMap<>();

    @Override
    public synchronized String quarantine(String kind, String key) {
        Map<String, Object> d = kinds.getOrDefault(kind, new TreeMap<>()).remove(key);
        quarantined.put(location(kind, key), d);
        return location(kind, key) + ".damaged";
    }

    private static Map<String, Object> copy(Map<String, Object> d) {
        return Json.parseObject(Json.write(d)); // as a file round trip would: Longs, lists, maps
    }
}
