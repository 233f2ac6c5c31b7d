package io.jcni.docker.store;

import io.jcni.docker.api.DriverException;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * A {@link StateStore} that several hosts share (etcd): documents carry a version (etcd's
 * {@code mod_revision}), so a read-modify-write is a compare-and-swap, and a host can attach
 * documents to its lease, so they go when the host stops renewing it.
 */
public interface SharedStore extends StateStore {

    /** A document and the version it was read at. */
    record Versioned(Map<String, Object> doc, long version) {}

    /** How often {@link #update} tries before it gives up: each failed try means another host changed the document meanwhile. */
    int MAX_ATTEMPTS = 200;

    Optional<Versioned> read(String kind, String key);

    /** Writes {@code doc} only if the document is still at {@code version} (0: only if there is none); false when another writer came first. */
    boolean putIfVersion(String kind, String key, Map<String, Object> doc, long version);

    /** Deletes the document only if it is still at {@code version}; false when it changed (or went) meanwhile. */
    boolean deleteIfVersion(String kind, String key, long version);

    /** Writes {@code doc} attached to this host's lease: it disappears when the host stops renewing the lease. */
    void putLeased(String kind, String key, Map<String, Object> doc);

    /**
     * Read, change, compare-and-swap, retried while other hosts change the document in between.
     *
     * @param change the new document from the current one (empty: there is none); may throw
     *               {@link DriverException} to refuse, and is called again after every conflict
     * @return the document written
     */
    default Map<String, Object> update(String kind, String key, Function<Optional<Map<String, Object>>, Map<String, Object>> change) {
        for (int i = 0; i < MAX_ATTEMPTS; i++) {
            Optional<Versioned> now = read(kind, key);
            Map<String, Object> next = change.apply(now.map(Versioned::doc));
            if (putIfVersion(kind, key, next, now.map(Versioned::version).orElse(0L))) return next;
            if (i > 8) Thread.onSpinWait();
        }
        throw new DriverException(location(kind, key) + ": still changed by other hosts after " + MAX_ATTEMPTS + " attempts");
    }
}
