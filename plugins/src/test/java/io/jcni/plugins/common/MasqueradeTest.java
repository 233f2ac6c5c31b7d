package io.jcni.plugins.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.nft.ElementStore.Element;
import io.jcni.plugins.testutil.NetWorld;
import io.jcni.spec.Attachment;
import io.jcni.spec.Cidr;
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
        assertEquals(List.of(new Element("mq4", "10.1.2.3", null), new Element("mq4_own", "10.1.2.3 . 10.1.0.0/16", null),
                        new Element("mq6", "fd00::3", null), new Element("mq6_own", "fd00::3 . fd00::/64", null)),
                Masquerade.elements(List.of(Cidr.parse("10.1.2.3/16"), Cidr.parse("fd00::3/64"))));
    }

    /**
     * A container on br0 (10.79.0.0/24) talks to a server on another link (192.168.79.0/24) that
     * has no route back to 10.79.0.0/24: it only answers when the host masquerades.
     */
    @Test
    @Tag("root")
    void masqueradesUntilTeardownAndGcRemovesOrphans() throws Exception {
        try (NetWorld w = new NetWorld()) {
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
            String set = w.nft("list", "set", "inet", "jcni", "mq4");
            assertTrue(set.contains("10.79.0.2") && set.contains("10.79.0.8") && !set.contains("10.79.0.7"), set);
            assertEquals("outside", w.curl(c1, "http://192.168.79.2/"));
        }
    }
}
