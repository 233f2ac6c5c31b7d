package io.jcni.plugins.common.nft;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Who claims one key of a set or map, in claim order. The first claimant holds the key (its
 * element is the one in nftables); the others wait, in order, and the next one takes the key when
 * the holder goes. This is how two attachments that publish the same host port share it: the
 * first keeps it, as with the reference portmap, and neither's DEL takes it from the other. Pure.
 *
 * <p>On disk ({@code key/SET/KEY}): the claims as lines, owner id then value (empty for a set
 * element), one pair per claimant. A record written by a jcni that knew one holder only ("ID\nVALUE")
 * reads as that one claim.
 */
record KeyClaims(List<Claim> claims) {
    /** One claim: the owner's {@code ElementStore.Owner#id()} and the value it wants (null for a set element). */
    record Claim(String ownerId, String value) {}

    static final KeyClaims NONE = new KeyClaims(List.of());

    KeyClaims {
        claims = List.copyOf(claims);
    }

    /** Reads a record; null (no file) is no claim. */
    static KeyClaims parse(String text) {
        if (text == null) return NONE;
        String[] lines = text.split("\n", -1);
        List<Claim> out = new ArrayList<>();
        for (int i = 0; i < lines.length; i += 2) {
            if (lines[i].isEmpty()) continue; // a trailing newline
            String v = i + 1 < lines.length ? lines[i + 1] : "";
            out.add(new Claim(lines[i], v.isEmpty() ? null : v));
        }
        return new KeyClaims(out);
    }

    String format() {
        StringBuilder b = new StringBuilder();
        for (Claim c : claims) {
            if (!b.isEmpty()) b.append('\n');
            b.append(c.ownerId()).append('\n').append(c.value() == null ? "" : c.value());
        }
        return b.toString();
    }

    boolean isEmpty() {
        return claims.isEmpty();
    }

    /** The claim whose element is in nftables, or null when nobody claims the key. */
    Claim holder() {
        return claims.isEmpty() ? null : claims.get(0);
    }

    boolean heldBy(String ownerId) {
        return !claims.isEmpty() && claims.get(0).ownerId().equals(ownerId);
    }

    boolean claimedBy(String ownerId) {
        for (Claim c : claims) if (c.ownerId().equals(ownerId)) return true;
        return false;
    }

    /** {@code ownerId} claims {@code value}: in its place when it claimed the key already, else last. */
    KeyClaims with(String ownerId, String value) {
        List<Claim> out = new ArrayList<>(claims);
        Claim mine = new Claim(ownerId, value);
        for (int i = 0; i < out.size(); i++) {
            if (out.get(i).ownerId().equals(ownerId)) {
                out.set(i, mine);
                return new KeyClaims(out);
            }
        }
        out.add(mine);
        return new KeyClaims(out);
    }

    KeyClaims without(String ownerId) {
        return retain(c -> !c.ownerId().equals(ownerId));
    }

    KeyClaims retain(Predicate<Claim> keep) {
        List<Claim> out = new ArrayList<>();
        for (Claim c : claims) if (keep.test(c)) out.add(c);
        return out.size() == claims.size() ? this : new KeyClaims(out);
    }
}
