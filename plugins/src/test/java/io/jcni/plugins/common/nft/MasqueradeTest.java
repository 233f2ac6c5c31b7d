package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.testutil.Topology;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MasqueradeTest {
    @TempDir
    Path tmp;

    @Test
    void elements() {
        List<Element> e = Masquerade.elements(List.of(Cidr.parse("10.1.2.3/16"), Cidr.parse("fd00::3/64")));
        assertEquals(List.of(new Element("mq4_16", "10.1.2.3", null), new Element("mq4_own_16", "10.1.2.3 . 10.1.0.0", null),
                new Element("mq6_64", "fd00::3", null), new Element("mq6_own_64", "fd00::3 . fd00::", null)), e);
        String s = Masquerade.skeleton(e);
        assertTrue(s.contains("add rule inet jcni mq4_16 meta nfproto ipv4 ip saddr . ip daddr & 255.255.0.0 @mq4_own_16 return"), s);
        assertTrue(s.contains("add rule inet jcni mq6_64 meta nfproto ipv6 ip6 saddr @mq6_64 ip6 daddr != ff00::/8 masquerade"), s);
        assertTrue(s.contains("ip6 daddr & ffff:ffff:ffff:ffff:: @mq6_own_64"), s);
    }

    /**
     * A container on br0 (10.79.0.0/24) talks to a server on another link (192.168.79.0/24) that
     * has no route back to 10.79.0.0/24: it only answers when the host masquerades.
     */
    @Test
    @Tag("root")
    void masqueradesUntilTeardownAndGcRemovesOrphans() throws Exception {
        try (Topology w = new Topology()) {
            w.bridge("br0", "10.79.0.1/24");
            w.bridge("brout", "192.168.79.1/24");
            String c1 = w.container("c1", "br0", new String[] {"10.79.0.2/24"}, new String[] {"10.79.0.1"});
            String out = w.container("out", "brout", new String[] {"192.168.79.2/24"}, new String[] {});
            w.httpd(out, 80, "outside", tmp.resolve("www"));
            assertNull(w.curl(c1, "http://192.168.79.2/"), "no route back without masquerade");

            Masquerade m = Masquerade.in(w.hostNs, tmp.resolve("state"));
            m.setup("net1", "ctr1", "eth0", List.of(Cidr.parse("10.79.0.2/24")));
            m.setup("net1", "ctr1", "eth0", List.of(Cidr.parse("10.79.0.2/24"))); // idempotent
            assertEquals("outside", w.curl(c1, "http://192.168.79.2/"));
            assertTrue(m.check("net1", "ctr1", "eth0", List.of(Cidr.parse("10.79.0.2/24"))));

            m.teardown("net1", "ctr1", "eth0");
            m.teardown("net1", "ctr1", "eth0"); // idempotent
            assertNull(w.curl(c1, "http://192.168.79.2/"));
            assertFalse(m.check("net1", "ctr1", "eth0", List.of(Cidr.parse("10.79.0.2/24"))));

            m.setup("net1", "keep", "eth0", List.of(Cidr.parse("10.79.0.2/24")));
            m.setup("net1", "orphan", "eth0", List.of(Cidr.parse("10.79.0.7/24")));
            m.setup("net2", "other", "eth0", List.of(Cidr.parse("10.79.0.8/24")));
            assertEquals(1, m.gc("net1", List.of(new Attachment("keep", "eth0"))));
            String set = w.nft("list", "set", "inet", "jcni", "mq4_24");
            assertTrue(set.contains("10.79.0.2") && set.contains("10.79.0.8") && !set.contains("10.79.0.7"), set);
            assertEquals("outside", w.curl(c1, "http://192.168.79.2/"));
        }
    }
}
