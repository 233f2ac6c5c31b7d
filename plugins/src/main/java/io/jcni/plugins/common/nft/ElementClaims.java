package io.jcni.plugins.common.nft;

import io.jcni.linux.nft.NftBatch;
import io.jcni.linux.nft.NftException;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.types.DamagedStateException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Changes of what one attachment claims, under the namespace's lock ({@link ElementStore} takes
 * it): the records of the attachment and of the keys it touches ({@link StateFiles}), the plan
 * ({@link Ownership}) and its one nf_tables transaction ({@link ElementTransactions}), in the order
 * that keeps the records true when the plugin dies between any two of them.
 */
final class ElementClaims {
    private final String table;
    private final StateFiles files;
    private final ElementTransactions transactions;

    ElementClaims(String table, StateFiles files, ElementTransactions transactions) {
        this.table = table;
        this.files = files;
        this.transactions = transactions;
    }

    /** {@link ElementStore#put}, under the lock, of {@code elements} of distinct keys ({@link #checkDistinct}). */
    void put(Owner owner, Function<List<Element>, String> skeleton, List<Element> elements) {
        List<Element> before = recorded(owner);
        Ownership.Plan plan = Ownership.put(owner.id(), owner.comment(), before, elements, new LiveClaims(files, Set.of()));
        if (elements.isEmpty() && plan.claims().isEmpty()) return;
        Set<Element> wanted = new HashSet<>();
        for (Element e : elements) wanted.add(Ownership.keyOf(e));
        // Intent first: if we die after nft, the records still name every element we may hold.
        List<Element> union = new ArrayList<>(elements);
        for (Element e : before) if (!union.contains(e)) union.add(e);
        Map<Element, KeyClaims> claimsBefore = new LinkedHashMap<>();
        for (Element k : wanted) claimsBefore.put(k, files.readClaims(k));
        files.write(owner, union);
        plan.claims().forEach((k, c) -> { if (wanted.contains(k)) files.writeClaims(k, c); });
        try {
            if (plan.changesNftables()) apply(skeleton, elements, plan);
        } catch (NftException e) {
            // nft applied nothing (one transaction): put the records back as they were, so a
            // refused ADD leaves no record naming elements that were never added.
            claimsBefore.forEach(files::writeClaims);
            if (before.isEmpty()) files.deleteAttFile(owner);
            else files.write(owner, before);
            throw e;
        }
        plan.claims().forEach((k, c) -> { if (!wanted.contains(k)) files.writeClaims(k, c); });
        files.write(owner, elements);
    }

    /** Releases {@code owner}'s claims; no key goes to an owner in {@code leaving} (those GC removes too). */
    List<Element> remove(Owner owner, Function<List<Element>, String> skeleton, Set<String> leaving) {
        List<Element> recorded = recorded(owner);
        List<Element> mine = claimed(owner, recorded);
        Ownership.Plan plan = Ownership.release(owner.id(), mine, new LiveClaims(files, leaving));
        if (plan.changesNftables()) apply(skeleton, mine, plan);
        plan.claims().forEach(files::writeClaims);
        // An ADD killed while it wrote a key record leaves that record's temporary file, also for
        // a key it never came to claim; its record names the key (intent first): one unlink per
        // recorded key, before the record that names them goes.
        for (Element e : recorded) files.deleteKeyTemporary(e);
        files.deleteAttFile(owner);
        return mine;
    }

    /**
     * Under the lock: the elements {@code owner}'s record lists; when the record is damaged, those
     * the key records say it claims, and the record is moved aside and reported ({@link StateFiles#recover}).
     */
    private List<Element> recorded(Owner owner) {
        try {
            return files.read(owner);
        } catch (DamagedStateException e) {
            return files.recover(owner, e);
        }
    }

    /** Those of {@code recorded} (the elements {@code owner}'s record lists) whose key records list it as a claimant. */
    List<Element> claimed(Owner owner, List<Element> recorded) {
        List<Element> out = new ArrayList<>();
        for (Element e : recorded) if (files.readClaims(e).claimedBy(owner.id())) out.add(e);
        return out;
    }

    /**
     * Sends {@code plan}'s changes in one transaction with the structure {@code skeleton} gives for
     * {@code elements} and the elements the plan changes; if nft says a key holds another value, the
     * same changes as after a crash past the transaction are tried ({@link ElementTransactions#apply}).
     */
    private void apply(Function<List<Element>, String> skeleton, List<Element> elements, Ownership.Plan plan) {
        List<Element> touched = new ArrayList<>(elements);
        for (Element e : plan.remove()) if (!touched.contains(e)) touched.add(e);
        for (ElementTransactions.Put p : plan.puts()) if (!touched.contains(p.element())) touched.add(p.element());
        Skeleton skel = Skeleton.parse(table, skeleton.apply(touched));
        NftBatch batch = ElementTransactions.batch(table, skel, plan.remove(), plan.puts());
        Ownership.Plan applied = plan.assumingApplied();
        boolean differs = !applied.puts().equals(plan.puts());
        transactions.apply(skel, batch, differs ? ElementTransactions.batch(table, skel, applied.remove(), applied.puts()) : null);
    }

    /** Refuses a list that names one key twice (a caller's bug: one attachment holds a key once). */
    static void checkDistinct(List<Element> elements) {
        Set<String> seen = new LinkedHashSet<>();
        for (Element e : elements) {
            if (!seen.add(e.set() + "\0" + e.key())) {
                throw new IllegalArgumentException("element " + e.key() + " of " + e.set() + " given twice");
            }
        }
    }

    /** The claims on disk; a claimant is live while its record lists the key and it is not in {@code leaving}. */
    private static final class LiveClaims implements Ownership.Claims {
        private final StateFiles files;
        private final Set<String> leaving;

        LiveClaims(StateFiles files, Set<String> leaving) {
            this.files = files;
            this.leaving = leaving;
        }

        @Override
        public KeyClaims of(Element e) {
            return files.readClaims(e);
        }

        @Override
        public boolean live(String ownerId, Element e) {
            if (leaving.contains(ownerId)) return false;
            AttRecord r = files.record(ownerId);
            if (r == null) return false;
            for (Element x : r.elements()) if (x.set().equals(e.set()) && x.key().equals(e.key())) return true;
            return false;
        }

        @Override
        public String comment(String ownerId) {
            AttRecord r = files.record(ownerId);
            return r == null ? null : r.owner().comment();
        }
    }
}
