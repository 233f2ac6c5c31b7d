package io.jcni.docker.store;

import io.jcni.types.DamagedStateException;
import io.jcni.types.StateDoc;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Where the driver keeps networks, pools and endpoints: small JSON documents under (kind, key).
 *
 * <p>Every change the driver makes is one {@link #put} or {@link #delete} of one document, so a
 * store only needs atomic single-document writes. That is what makes the step to a shared store
 * small: {@link EtcdStore} maps (kind, key) to the etcd key {@code /jcni/docker/KIND/KEY}, and
 * the one read-modify-write shared between hosts (a cluster network's pool) is a compare-and-swap on
 * the document's mod revision ({@link SharedStore#update}; module README, "Cluster networks").
 */
public interface StateStore {

    /** @throws DamagedStateException when the document is there but is not a JSON object */
    Optional<Map<String, Object>> get(String kind, String key);

    /** Replaces the document atomically: a reader sees the old one or the new one, even after a crash. */
    void put(String kind, String key, Map<String, Object> doc);

    /** Removes the document; absent is fine. */
    void delete(String kind, String key);

    /** The keys of a kind's documents, sorted. */
    List<String> keys(String kind);

    /** Where a document lives, for messages (a file's path). */
    String location(String kind, String key);

    /**
     * Moves a damaged document aside, where it is neither read again nor lost (a file becomes
     * {@code PATH.damaged-TIME}), and says where it went.
     */
    String quarantine(String kind, String key);

    /** Every document of a kind, by key. @throws DamagedStateException on the first that is not JSON */
    default Map<String, Map<String, Object>> list(String kind) {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (String k : keys(kind)) get(kind, k).ifPresent(d -> out.put(k, d));
        return out;
    }

    /**
     * Every document of a kind read through {@code decode}, by key. A document that is not JSON,
     * that {@code decode} rejects, or whose id ({@code idOf}) is not its key, is quarantined and reported (one line naming the file and what
     * is wrong) and left out, so one damaged file never stops the driver from serving the rest.
     */
    default <T> Map<String, T> load(String kind, Function<StateDoc, T> decode, Function<T, String> idOf, Consumer<String> report) {
        Map<String, T> out = new TreeMap<>();
        for (String k : keys(kind)) {
            String where = location(kind, k);
            try {
                Optional<Map<String, Object>> doc = get(kind, k);
                if (doc.isEmpty()) continue;
                T t = decode.apply(StateDoc.of(where, doc.get()));
                // The file name is the key every later put and delete uses; a hand-edited id would split the two.
                if (!k.equals(idOf.apply(t))) throw new DamagedStateException(where, "id: \"" + idOf.apply(t) + "\" is not the file's name");
                out.put(k, t);
            } catch (RuntimeException e) {
                // A decoder bug must not take the driver down either: it is reported like damage.
                String why = e instanceof DamagedStateException ? e.getMessage() : "damaged state file " + where + ": " + e;
                String moved;
                try {
                    moved = "moved to " + quarantine(kind, k);
                } catch (RuntimeException q) {
                    moved = "could not be moved aside (" + q.getMessage() + ")";
                }
                report.accept(why + "; " + moved + ", " + kind + " " + k + " skipped");
            }
        }
        return out;
    }
}
