package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Owner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Predicate;

/**
 * GC of element state, where a runtime expects leftovers to be collected: the attachments it no
 * longer lists, the temporary files of writers killed mid-write, and the state of namespaces that
 * are gone for good ({@link DeadNamespaceState}).
 */
final class ElementGc {
    private ElementGc() {}

    /**
     * Under the namespace's lock: removes (with {@code remove}, given every attachment that goes) every attachment of {@code scope} in
     * {@code network} that {@code keep} rejects, then the abandoned temporary files. Returns the
     * attachments removed.
     */
    static List<Owner> orphans(StateFiles files, String scope, String network, Predicate<Owner> keep,
                               BiConsumer<Owner, Set<String>> remove) {
        List<Owner> removed = new ArrayList<>();
        for (Owner o : files.owners(scope, network)) if (!keep.test(o)) removed.add(o);
        // A key an orphan holds goes to the next claimant that stays, not to another orphan.
        Set<String> leaving = new HashSet<>();
        for (Owner o : removed) leaving.add(o.id());
        for (Owner o : removed) remove.accept(o, leaving);
        files.deleteAbandonedTemporaries();
        return removed;
    }

    /** Without the lock of {@code dir}: removes the state of every other namespace under its base that is gone for good. */
    static void deadNamespaces(Path dir) {
        DeadNamespaceState.sweep(dir.getParent(), Long.parseLong(dir.getFileName().toString()));
    }
}
