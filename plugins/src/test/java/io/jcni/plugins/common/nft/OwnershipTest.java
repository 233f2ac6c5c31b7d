package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementTransactions.Put;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** One owner of a key at a time: who holds, who waits, what goes to nftables. Pure, no root. */
class OwnershipTest {
    static final Element A_8080 = new Element("pm4", "tcp . 8080", "10.0.0.2 . 80");
    static final Element B_8080 = new Element("pm4", "tcp . 8080", "10.0.0.3 . 80");
    static final Element C_8080 = new Element("pm4", "tcp . 8080", "10.0.0.4 . 80");

    /** Claims and records in memory, applied as ElementStore applies a plan. */
    static final class Disk implements Ownership.Claims {
        final Map<Element, KeyClaims> claims = new HashMap<>();
        final Map<String, List<Element>> records = new HashMap<>();
        final Set<String> gone = new HashSet<>();

        @Override
        public KeyClaims of(Element e) {
            return claims.getOrDefault(Ownership.keyOf(e), KeyClaims.NONE);
        }

        @Override
        public boolean live(String ownerId, Element e) {
            if (gone.contains(ownerId)) return false;
            for (Element x : records.getOrDefault(ownerId, List.of())) if (Ownership.keyOf(x).equals(Ownership.keyOf(e))) return true;
            return false;
        }

        @Override
        public String comment(String ownerId) {
            return "portmap n " + ownerId + " eth0";
        }

        Ownership.Plan add(String id, List<Element> want) {
            Ownership.Plan p = Ownership.put(id, comment(id), records.getOrDefault(id, List.of()), want, this);
            claims.putAll(p.claims());
            records.put(id, want);
            return p;
        }

        Ownership.Plan del(String id) {
            List<Element> mine = records.getOrDefault(id, List.of()).stream().filter(e -> of(e).claimedBy(id)).toList();
            Ownership.Plan p = Ownership.release(id, mine, this);
            claims.putAll(p.claims());
            records.remove(id);
            return p;
        }
    }

    @Test
    void theFirstClaimantHoldsTheKeyALaterOneWaitsWithoutTouchingNftables() {
        Disk d = new Disk();
        Ownership.Plan a = d.add("a", List.of(A_8080));
        assertEquals(List.of(new Put(A_8080, null, "portmap n a eth0")), a.puts());
        Ownership.Plan b = d.add("b", List.of(B_8080));
        assertFalse(b.changesNftables(), "b waits: the element stays a's");
        assertEquals("a", d.of(A_8080).holder().ownerId());
        assertTrue(d.of(A_8080).claimedBy("b"));
    }

    @Test
    void delOfAWaitingClaimantLeavesTheHolderAlone() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.add("b", List.of(B_8080));
        Ownership.Plan p = d.del("b");
        assertFalse(p.changesNftables());
        assertEquals(List.of(new KeyClaims.Claim("a", "10.0.0.2 . 80")), d.of(A_8080).claims());
    }

    @Test
    void delOfTheHolderHandsTheKeyToTheNextClaimantInClaimOrder() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.add("b", List.of(B_8080));
        d.add("c", List.of(C_8080));
        Ownership.Plan p = d.del("a");
        assertEquals(List.of(), p.remove());
        assertEquals(List.of(new Put(B_8080, "10.0.0.2 . 80", "portmap n b eth0")), p.puts(), "b's value over a's, b's comment");
        assertEquals("b", d.of(A_8080).holder().ownerId());
        Ownership.Plan last = d.del("b");
        assertEquals(List.of(new Put(C_8080, "10.0.0.3 . 80", "portmap n c eth0")), last.puts());
        Ownership.Plan none = d.del("c");
        assertEquals(List.of(C_8080), none.remove(), "the last one removes the element with the value in force");
        assertTrue(d.of(A_8080).isEmpty());
    }

    @Test
    void aClaimantWhoseRecordIsGoneIsSkipped() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.add("b", List.of(B_8080));
        d.add("c", List.of(C_8080));
        d.records.remove("b"); // b's DEL died after removing its record, or its record was lost
        Ownership.Plan p = d.del("a");
        assertEquals(List.of(new Put(C_8080, "10.0.0.2 . 80", "portmap n c eth0")), p.puts());
        assertEquals(List.of(new KeyClaims.Claim("c", "10.0.0.4 . 80")), d.of(A_8080).claims());
    }

    @Test
    void gcHandsTheKeyPastClaimantsThatGoToo() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.add("b", List.of(B_8080));
        d.add("c", List.of(C_8080));
        d.gone.addAll(Set.of("a", "b"));
        Ownership.Plan p = d.del("a");
        assertEquals(List.of(new Put(C_8080, "10.0.0.2 . 80", "portmap n c eth0")), p.puts(), "straight to c");
        assertFalse(d.del("b").changesNftables());
        assertEquals("c", d.of(A_8080).holder().ownerId());
    }

    @Test
    void aNewClaimantTakesAKeyWhoseHolderIsGoneOverItsValue() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.records.remove("a"); // a crash left a's claim without its record
        Ownership.Plan p = d.add("b", List.of(B_8080));
        assertEquals(List.of(new Put(B_8080, "10.0.0.2 . 80", "portmap n b eth0")), p.puts());
        assertEquals(List.of(new KeyClaims.Claim("b", "10.0.0.3 . 80")), d.of(A_8080).claims());
    }

    @Test
    void reAddKeepsTheClaimsPlaceAndAChangedMappingReleasesTheOldKey() {
        Disk d = new Disk();
        d.add("a", List.of(A_8080));
        d.add("b", List.of(B_8080));
        assertFalse(d.add("b", List.of(B_8080)).changesNftables(), "b still waits");
        assertEquals(List.of(new Put(A_8080, "10.0.0.2 . 80", "portmap n a eth0")), d.add("a", List.of(A_8080)).puts(),
                "the holder's re-ADD puts its element back (a reboot may have taken it)");
        Element a9090 = new Element("pm4", "tcp . 9090", "10.0.0.2 . 80");
        Ownership.Plan p = d.add("a", List.of(a9090));
        assertEquals(List.of(new Put(a9090, null, "portmap n a eth0"), new Put(B_8080, "10.0.0.2 . 80", "portmap n b eth0")), p.puts());
    }

    @Test
    void setElementsAreKeptWhileAnyClaimantIsLeft() {
        Disk d = new Disk();
        Element local = new Element("pm_local4", "10.0.0.2", null);
        d.add("a", List.of(local));
        assertFalse(d.add("b", List.of(local)).changesNftables());
        Ownership.Plan p = d.del("a");
        assertEquals(List.of(new Put(local, null, "portmap n b eth0")), p.puts(), "b's comment on the same element");
        assertEquals(List.of(local), d.del("b").remove());
    }

    @Test
    void assumingAppliedPutsEveryElementOverItsOwnValue() {
        Ownership.Plan p = new Ownership.Plan(List.of(), List.of(new Put(B_8080, "10.0.0.2 . 80", "c")), Map.of());
        assertEquals(List.of(new Put(B_8080, "10.0.0.3 . 80", "c")), p.assumingApplied().puts());
    }

    @Test
    void claimsReadOldSingleHolderRecordsAndRoundTrip() {
        assertEquals(List.of(new KeyClaims.Claim("portmap/n/a@eth0", "10.0.0.2 . 80")),
                KeyClaims.parse("portmap/n/a@eth0\n10.0.0.2 . 80").claims(), "a record of one holder, as jcni wrote it before");
        assertEquals(List.of(new KeyClaims.Claim("masq/n/a@eth0", null)), KeyClaims.parse("masq/n/a@eth0\n").claims());
        KeyClaims k = KeyClaims.NONE.with("x", null).with("y", "1 . 2").with("z", null);
        assertEquals(k, KeyClaims.parse(k.format()));
        assertEquals(KeyClaims.NONE, KeyClaims.parse(null));
        assertEquals(List.of("y", "z"), k.without("x").claims().stream().map(KeyClaims.Claim::ownerId).toList());
        assertEquals(List.of("x", "y", "z"), k.with("y", "3 . 4").claims().stream().map(KeyClaims.Claim::ownerId).toList(),
                "a new value keeps the claim's place");
    }
}
