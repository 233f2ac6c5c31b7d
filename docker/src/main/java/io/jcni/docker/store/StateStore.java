package io.jcni.docker.store;

import java.util.Map;
import java.util.Optional;

/**
 * Where the driver keeps networks, pools and endpoints: small JSON documents under (kind, key).
 *
 * <p>Every change the driver makes is one {@link #put} or {@link #delete} of one document, so a
 * store only needs atomic single-document writes. That is what makes the step to a shared store
 * small: an etcd-backed store maps (kind, key) to the etcd key {@code /jcni/docker/KIND/KEY}, and
 * the few read-modify-write sequences (a pool's allocations) become a compare-and-swap on the
 * document's mod revision (see the module README, "Global scope").
 */
public interface StateStore {

    Optional<Map<String, Object>> get(String kind, String key);

    /** Replaces the document atomically: a reader sees the old one or the new one, even after a crash. */
    void put(String kind, String key, Map<String, Object> doc);

    /** Removes the document; absent is fine. */
    void delete(String kind, String key);

    /** Every document of a kind, by key. */
    Map<String, Map<String, Object>> list(String kind);
}
