package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ElementStoreTest {
    @Test
    void namesRoundTripAndAreSafe() {
        for (String s : new String[] {"", ".", "..", "a/b", "net-1.x", "é\"\\ @%", "tcp . 8080"}) {
            String e = StateNames.enc(s);
            assertEquals(s, StateNames.dec(e));
            assertEquals(-1, e.indexOf('/'), e);
            assertEquals(false, e.equals(".") || e.equals(".."), e);
        }
    }

    @Test
    void longNamesBecomeHashedFileNamesThatFitNameMax() {
        String shortName = StateNames.enc("c1@eth0");
        assertEquals(shortName, StateNames.fileName(shortName));
        String longName = StateNames.enc("c".repeat(4096)) + "@eth0";
        String f = StateNames.fileName(longName);
        assertEquals(true, f.length() + io.jcni.common.AtomicFile.MAX_TEMPORARY_EXTRA <= 255, f);
        assertEquals(f, StateNames.fileName(longName));
        assertEquals(false, f.equals(StateNames.fileName(StateNames.enc("c".repeat(4096)) + "@eth1")));
        assertEquals(-1, StateNames.enc("~x").indexOf(StateNames.HASH_MARK), "the hash mark never comes from enc");
    }

    @Test
    void commentIsQuoteFreeAndShort() {
        ElementStore.Owner o = new ElementStore.Owner("portmap", "n\"et", "c".repeat(200), "eth0");
        String c = o.comment();
        assertEquals(-1, c.indexOf('"'));
        assertEquals(true, c.length() <= 128);
    }

    @Test
    void scriptForASetAndAMap() {
        Map<ElementStore.Element, String> add = new LinkedHashMap<>();
        add.put(new ElementStore.Element("s", "10.0.0.1", null), null);
        add.put(new ElementStore.Element("m", "tcp . 1", "10.0.0.1 . 2"), null);
        assertEquals("""
                add table inet jcni
                add element inet jcni s { 10.0.0.1 }
                delete element inet jcni s { 10.0.0.1 }
                add element inet jcni s { 10.0.0.1 comment "x" }
                add element inet jcni m { tcp . 1 : 10.0.0.1 . 2 }
                delete element inet jcni m { tcp . 1 }
                add element inet jcni m { tcp . 1 comment "x" : 10.0.0.1 . 2 }
                """, ElementScript.script("add table inet jcni", "x", List.of(), add));
    }

    @Test
    void ownersNeedAllParts() {
        assertThrows(NullPointerException.class, () -> new ElementStore.Owner("a", null, "c", "i"));
    }
}
