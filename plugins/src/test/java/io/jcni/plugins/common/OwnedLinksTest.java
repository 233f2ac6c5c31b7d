package io.jcni.plugins.common;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

class OwnedLinksTest {

    @Test
    void shortTagsAreReadableAndLongOnesFitTheAliasAndKeepTheirNetwork() {
        assertEquals("jcni/net/c1/eth0", OwnedLinks.tag("net", "c1", "eth0"));
        assertTrue(OwnedLinks.isTagOf("jcni/net/c1/eth0", "net"));
        assertFalse(OwnedLinks.isTagOf("jcni/net/c1/eth0", "ne"));

        String longNet = "n".repeat(200);
        String t = OwnedLinks.tag(longNet, "c".repeat(250), "eth0");
        assertTrue(t.length() <= OwnedLinks.MAX_ALIAS, t);
        assertTrue(t.startsWith("jcni#"), t);
        assertEquals(t, OwnedLinks.tag(longNet, "c".repeat(250), "eth0"), "deterministic, so GC can match it");
        assertNotEquals(t, OwnedLinks.tag(longNet, "c".repeat(250), "eth1"));
        assertTrue(OwnedLinks.isTagOf(t, longNet));
        assertFalse(OwnedLinks.isTagOf(t, "n".repeat(199)), "another network's GC leaves it alone");
        assertTrue(OwnedLinks.tag("n", "c".repeat(4096), "eth0").length() <= OwnedLinks.MAX_ALIAS);

        String bw = OwnedLinks.tag("jcni-bandwidth", longNet, "c".repeat(250), "eth0");
        assertTrue(bw.startsWith("jcni-bandwidth#") && OwnedLinks.isTagOf("jcni-bandwidth", bw, longNet), bw);
        assertFalse(OwnedLinks.isTagOf(bw, longNet), "a bandwidth tag is not a veth tag");
    }
}
