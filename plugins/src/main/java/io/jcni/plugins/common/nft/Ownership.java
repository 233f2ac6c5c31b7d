package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementTransactions.Put;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a change of one attachment's elements does to nftables and to the claims of the keys it
 * touches ({@link KeyClaims}: the first claimant holds a key, the others wait in order). Pure: the
 * claims and the liveness of other claimants come from {@link Claims}.
 *
 * <p>A claim of a key someone else holds changes nothing in nftables: the claim waits. Releasing
 * a key one does not hold only drops the claim. Releasing a held key hands it to the next live
 * claimant (its value, its comment) or, with none left, removes the element. A claimant is live
 * when its attachment's record still lists the key; others (a crash between two writes, an old
 * record) are dropped on the way.
 */
final class Ownership {
    private Ownership() {}

    /** The claims as recorded, and who of them is still there. */
    interface Claims {
        KeyClaims of(Element e);

        /** Whether {@code ownerId}'s attachment record still lists {@code e}'s key. */
        boolean live(String ownerId, Element e);

        /** The element comment of {@code ownerId}'s attachment. */
        String comment(String ownerId);
    }

    /**
     * The nftables changes and the claims after them.
     *
     * @param claims the new claims of every key touched, by {@link #keyOf} (empty: nobody claims it)
     */
    record Plan(List<Element> remove, List<Put> puts, Map<Element, KeyClaims> claims) {
        boolean changesNftables() {
            return !remove.isEmpty() || !puts.isEmpty();
        }

        /**
         * The same changes for a transaction that was applied already, its records not written
         * (a plugin killed in between): every element put holds its new value by now.
         */
        Plan assumingApplied() {
            List<Put> applied = new ArrayList<>();
            for (Put p : puts) applied.add(new Put(p.element(), p.element().value(), p.comment()));
            return new Plan(remove, applied, claims);
        }
    }

    /** The key of {@code e}, as claims are kept: set and key, no value. */
    static Element keyOf(Element e) {
        return e.value() == null ? e : new Element(e.set(), e.key(), null);
    }

    /**
     * {@code me} (commented {@code comment}) claims exactly {@code want}; {@code before} is what
     * its record listed.
     */
    static Plan put(String me, String comment, List<Element> before, List<Element> want, Claims c) {
        List<Element> remove = new ArrayList<>();
        List<Put> puts = new ArrayList<>();
        Map<Element, KeyClaims> after = new LinkedHashMap<>();
        Set<Element> wanted = new LinkedHashSet<>();
        for (Element e : want) {
            wanted.add(keyOf(e));
            KeyClaims now = c.of(e);
            KeyClaims next = now.retain(cl -> cl.ownerId().equals(me) || c.live(cl.ownerId(), e)).with(me, e.value());
            after.put(keyOf(e), next);
            if (next.heldBy(me)) puts.add(new Put(e, now.holder() == null ? null : now.holder().value(), comment));
        }
        for (Element e : before) {
            if (!wanted.contains(keyOf(e))) release(me, e, c, remove, puts, after);
        }
        return new Plan(remove, puts, after);
    }

    /** {@code me} gives up every key of {@code held} (what its record lists). */
    static Plan release(String me, List<Element> held, Claims c) {
        List<Element> remove = new ArrayList<>();
        List<Put> puts = new ArrayList<>();
        Map<Element, KeyClaims> after = new LinkedHashMap<>();
        for (Element e : held) release(me, e, c, remove, puts, after);
        return new Plan(remove, puts, after);
    }

    private static void release(String me, Element e, Claims c, List<Element> remove, List<Put> puts, Map<Element, KeyClaims> after) {
        KeyClaims now = c.of(e);
        if (!now.claimedBy(me) || after.containsKey(keyOf(e))) return;
        KeyClaims next = now.without(me).retain(cl -> c.live(cl.ownerId(), e));
        after.put(keyOf(e), next);
        if (!now.heldBy(me)) return; // only waiting: nothing in nftables is ours
        String inForce = now.holder().value();
        if (next.holder() == null) {
            remove.add(new Element(e.set(), e.key(), inForce));
        } else {
            Element handed = new Element(e.set(), e.key(), next.holder().value());
            puts.add(new Put(handed, inForce, c.comment(next.holder().ownerId())));
        }
    }
}
