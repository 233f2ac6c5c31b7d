package io.jcni.linux.nft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jcni.linux.nft.NftBatch.Family;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The element messages byte for byte against what nft 1.0.6 sends for the same lines, captured with
 * {@code strace -e trace=sendmsg -xx nft -f} (little-endian host). No root, no kernel.
 */
class NftBatchTest {
    private static final HexFormat HEX = HexFormat.of();

    /** ipv4_addr . ifname: 10.0.0.2 . "cni0" (the address, then the name NUL-padded to 16 bytes). */
    private static final byte[] HAIR_KEY = HEX.parseHex("0a000002" + "636e6930" + "00".repeat(12));

    @Test
    void deleteElementIsWhatNftSends() {
        // delete element inet jcni pm_hair4 { 10.0.0.2 . "cni0" }, sequence number 3
        String nft = "54000000" + "0e0a" + "0100" + "03000000" + "00000000" // nlmsghdr
                + "01000000"                                                 // nfgenmsg: NFPROTO_INET
                + "09000100" + "6a636e6900000000"                            // table "jcni"
                + "0d000200" + "706d5f686169723400000000"                    // set "pm_hair4"
                + "24000380" + "20000180" + "1c000180" + "18000100"          // elements > elem > key > value
                + "0a000002636e69300000000000000000" + "00000000";
        byte[] ours = new NftBatch().deleteElement(Family.INET, "jcni", "pm_hair4", HAIR_KEY, "x").encode(3);
        assertEquals(nft, HEX.formatHex(ours));
    }

    @Test
    void addMapElementWithCommentCarriesTheSameElementAsNft() {
        // add element inet jcni pm4 { tcp . 8080 comment "portmap net c1 eth0" : 10.0.0.2 . 80 }
        // nft also sends NFTA_SET_ELEM_LIST_SET_ID (for sets made in the same batch); the
        // element list, which is what the kernel stores, is identical.
        String nftElements = "44000380" + "40000180"
                + "10000180" + "0c000100" + "060000001f900000"                       // key: tcp . 8080
                + "10000280" + "0c000100" + "0a00000200500000"                       // data: 10.0.0.2 . 80
                + "1a000600" + "0014" + HEX.formatHex("portmap net c1 eth0".getBytes()) + "00" + "0000"; // comment
        byte[] ours = new NftBatch().addElement(Family.INET, "jcni", "pm4", HEX.parseHex("060000001f900000"),
                HEX.parseHex("0a00000200500000"), "portmap net c1 eth0", "x").encode(1);
        ByteBuffer b = ByteBuffer.wrap(ours).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals((10 << 8) | 12, b.getShort(4), "NFT_MSG_NEWSETELEM");
        assertEquals(0x401, b.getShort(6), "NLM_F_REQUEST|NLM_F_CREATE, as nft");
        assertEquals(1, b.get(16), "inet");
        // table (12 bytes) and set "pm4" (8 bytes) follow the 20-byte header; then the elements
        assertEquals("0900010" + "06a636e6900000000" + "08000200706d3400", HEX.formatHex(Arrays.copyOfRange(ours, 20, 40)));
        assertEquals(nftElements, HEX.formatHex(Arrays.copyOfRange(ours, 40, ours.length)));
        assertEquals(ours.length, b.getInt(0));
    }

    @Test
    void operationsNameEachChangeInNftWords() {
        NftBatch b = new NftBatch()
                .addElement(Family.INET, "jcni", "fw4", HEX.parseHex("0a000002"), null, null, "10.0.0.2")
                .deleteElement(Family.BRIDGE, "jcni", "msc_ports", HAIR_KEY, "\"cni0\"");
        assertEquals(List.of("add element inet jcni fw4 { 10.0.0.2 }", "delete element bridge jcni msc_ports { \"cni0\" }"),
                b.operations());
        assertEquals(2, b.size());
    }

    @Test
    void commentUserDataAndLimits() {
        assertArrayEquals(new byte[] {0, 3, 'a', 'b', 0}, NftBatch.commentUserData("ab"));
        assertThrows(IllegalArgumentException.class, () -> NftBatch.commentUserData("x".repeat(128)));
        assertThrows(IllegalArgumentException.class,
                () -> new NftBatch().addElement(Family.INET, "jcni", "s", new byte[0], null, null, "x"));
        assertEquals(Family.BRIDGE, Family.of("bridge"));
        assertThrows(IllegalArgumentException.class, () -> Family.of("arp"));
    }
}
