package io.jcni.linux.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Errno;
import io.jcni.linux.Netns;
import io.jcni.linux.nft.NftBatch.Family;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** nf_tables over netlink in scratch namespaces: transactions, their errors, large batches. */
@Tag("root")
class NfTablesTest {
    private static final String SKELETON = """
            add table inet jnt
            add set inet jnt s { type ipv4_addr; }
            add chain inet jnt c { type filter hook forward priority 0; policy accept; }
            add rule inet jnt c ip saddr @s accept
            add rule inet jnt c ip daddr @s accept
            """;

    private static byte[] ip(int i) {
        return new byte[] {10, (byte) (i >> 16), (byte) (i >> 8), (byte) i};
    }

    @Test
    void aBatchIsAllOrNothingAndNamesTheFirstRefusal() {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            Nft nft = Nft.in(ns);
            nft.run(SKELETON);
            try (NfTables t = nft.tables()) {
                NftBatch b = new NftBatch()
                        .addElement(Family.INET, "jnt", "s", ip(1), null, "first", "10.0.0.1")
                        .addElement(Family.INET, "jnt", "nope", ip(2), null, null, "10.0.0.2")
                        .deleteElement(Family.INET, "jnt", "s", ip(3), "10.0.0.3");
                NftException e = assertThrows(NftException.class, () -> t.apply(b));
                assertEquals(Errno.ENOENT, e.errno());
                assertTrue(e.getMessage().contains("add element inet jnt nope { 10.0.0.2 }"), e.getMessage());
                assertFalse(t.hasElement(Family.INET, "jnt", "s", ip(1)), "nothing of a refused batch applies");

                t.apply(new NftBatch().addElement(Family.INET, "jnt", "s", ip(1), null, "first", "10.0.0.1"));
                assertTrue(t.hasElement(Family.INET, "jnt", "s", ip(1)));
                assertEquals(2, t.ruleCount(Family.INET, "jnt", "c"));
                assertEquals(0, t.ruleCount(Family.INET, "missing", "c"));
            }
            assertTrue(list(n).contains("10.0.0.1 comment \"first\""), list(n));
        } finally {
            Netns.delete(n);
        }
    }

    /** Thousands of messages in one datagram, and as many errors: answered, not lost in a full receive buffer. */
    @Test
    void largeBatchesAndLargeFailures() {
        String n = uniqueName();
        int count = 3000;
        try (Netns ns = Netns.create(n)) {
            Nft nft = Nft.in(ns);
            nft.run(SKELETON);
            try (NfTables t = nft.tables()) {
                NftBatch add = new NftBatch();
                for (int i = 0; i < count; i++) add.addElement(Family.INET, "jnt", "s", ip(i), null, "bulk", "x");
                t.apply(add);
                assertTrue(t.hasElement(Family.INET, "jnt", "s", ip(0)) && t.hasElement(Family.INET, "jnt", "s", ip(count - 1)));

                NftBatch wrong = new NftBatch();
                for (int i = 0; i < count; i++) wrong.addElement(Family.INET, "jnt", "gone", ip(i), null, null, "10.x." + i);
                NftException e = assertThrows(NftException.class, () -> t.apply(wrong));
                assertEquals(Errno.ENOENT, e.errno());
                assertTrue(e.getMessage().contains("{ 10.x.0 }"), "the first refusal is named: " + e.getMessage());

                NftBatch del = new NftBatch();
                for (int i = 0; i < count; i++) del.deleteElement(Family.INET, "jnt", "s", ip(i), "x");
                t.apply(del);
                assertFalse(t.hasElement(Family.INET, "jnt", "s", ip(0)));
            }
        } finally {
            Netns.delete(n);
        }
    }

    private static String list(String ns) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", ns, "/usr/sbin/nft", "list", "ruleset").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out;
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String uniqueName() {
        return "jnt-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }
}
