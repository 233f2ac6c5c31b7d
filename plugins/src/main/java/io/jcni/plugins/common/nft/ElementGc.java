package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Owner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * GC of element state, where a runtime expects leftovers to be collected: the attachments it no
 * longer lists, the temporary files of writers killed mid-write, and the state of namespaces that
 * are gone for good ({@link DeadNamespaceState}).
 */
final class ElementGc {
    private ElementGc() {}

    /**
     * Under the namespace's lock: removes (with {@code remove}) every attachment of {@code scope} in
     * {@code network} that {@code keep} rejects, then the abandoned temporary files. Returns the
     * attachments removed.
     */
    static List<Owner> orphans(StateFiles files, String scope, String network, Predicate<Owner> keep, Consumer<Owner> remove) {
        List<Owner> removed = new ArrayList<>();
        for (Owner o : files.owners(scope, network)) {
            if (keep.test(o)) continue;
            remove.accept(o);
            removed.add(o);
        }
        files.deleteAbandonedTemporaries();
        return removed;
    }

    /** Without the lock of {@code dir}: removes the state of every other namespace under its base that is gone for good. */
    static void deadNamespaces(Path dir) {
        DeadNamespaceState.sweep(dir.getParent(), Long.parseLong(dir.getFileName().toString()));
    }
}
