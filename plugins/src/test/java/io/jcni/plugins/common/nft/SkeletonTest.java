package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.nft.NftBatch;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.meta.firewall.FirewallRules;
import io.jcni.plugins.meta.portmap.PortmapRules;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Structures read for their set types, and element text turned into the kernel's bytes. No root. */
class SkeletonTest {
    private static final String T = ElementStore.TABLE;
    private static final HexFormat HEX = HexFormat.of();

    private static String hex(byte[] b) {
        return b == null ? null : HEX.formatHex(b);
    }

    @Test
    void portmapKeysAndValuesAreWhatNftSends() {
        Skeleton s = Skeleton.parse(T, PortmapRules.skeleton());
        assertEquals(new Skeleton.SetType(List.of("inet_proto", "inet_service"), List.of("ipv4_addr", "inet_service")), s.sets().get("pm4"));
        // Bytes as captured from nft 1.0.6 (see linux NftBatchTest): each field padded to 4 bytes.
        Element pm4 = new Element("pm4", "tcp . 8080", "10.0.0.2 . 80");
        assertEquals("060000001f900000", hex(s.key(T, pm4)));
        assertEquals("0a00000200500000", hex(s.data(T, pm4, pm4.value())));
        Element hair = new Element("pm_hair4", "10.0.0.2 . \"cni0\"", null);
        assertEquals("0a000002" + "636e6930" + "00".repeat(12), hex(s.key(T, hair)));
        assertNull(s.data(T, hair, null));
        Element pm6h = new Element("pm6h", "fd00::1 . udp . 53", "fd00::2 . 5353");
        assertEquals("fd000000000000000000000000000001" + "11000000" + "00350000", hex(s.key(T, pm6h)));
        assertEquals("fd000000000000000000000000000002" + "14e90000", hex(s.data(T, pm6h, pm6h.value())));
        assertEquals("0a000005", hex(s.key(T, new Element("pm_local4", "10.0.0.5", null))),
                "a single field is not padded");
        assertEquals(Set.of("inet jcni portmap", "inet jcni pm_prerouting", "inet jcni pm_output", "inet jcni pm_postrouting"),
                s.flushedChains());
        assertEquals(List.of(), s.elements());
        assertEquals(Map.of("inet jcni pm_prerouting", 1, "inet jcni pm_output", 1, "inet jcni portmap", 4, "inet jcni pm_postrouting", 7),
                s.rules());
        assertEquals(PortmapRules.RULE_COUNT, s.rules().values().stream().mapToInt(Integer::intValue).sum());
    }

    @Test
    void theFirewallsBridgeElementsTravelWithTheBatchNotTheStructure() {
        Skeleton a = Skeleton.parse(T, FirewallRules.skeleton("CNI-ADMIN", "cni0"));
        Skeleton b = Skeleton.parse(T, FirewallRules.skeleton("CNI-ADMIN", "br1"));
        assertEquals(List.of(new Element("fw_iso", "\"cni0\"", null), new Element("fw_iso_same", "\"cni0\" . \"cni0\"", null)), a.elements());
        assertFalse(a.structure().contains("add element"), a.structure());
        assertEquals(a.hash(), b.hash(), "one structure whatever the bridge");
        assertEquals(a.structure(), Skeleton.parse(T, FirewallRules.skeleton("CNI-ADMIN", null)).structure());
        assertNotEquals(a.hash(), Skeleton.parse(T, FirewallRules.skeleton("OTHER", "cni0")).hash(), "another admin chain is another structure");
        assertEquals(32, a.key(T, a.elements().get(1)).length);
        assertEquals(Set.of("inet jcni fw_forward"), a.flushedChains());
        assertEquals(Map.of("inet jcni fw_forward", FirewallRules.RULE_COUNT), a.rules(), "the admin chain is not counted: it is the administrator's");
    }

    @Test
    void masqueradeAndBridgeTypes() {
        List<Element> els = Masquerade.elements(List.of(io.jcni.types.Cidr.parse("10.1.2.3/16"), io.jcni.types.Cidr.parse("fd00::3/64")));
        Skeleton s = Skeleton.parse(T, Masquerade.skeleton(els));
        assertEquals("0a010203" + "0a010000", hex(s.key(T, els.get(1))));
        assertEquals(32, s.key(T, els.get(3)).length);

        String bridge = "add table bridge jcni\nadd set bridge jcni msc_macs { type ifname . ether_addr; }\n";
        Skeleton m = Skeleton.parse("bridge jcni", bridge);
        assertEquals("7665746830" + "00".repeat(11) + "0a5800000002" + "0000",
                hex(m.key("bridge jcni", new Element("msc_macs", "\"veth0\" . 0a:58:00:00:00:02", null))));
        assertTrue(Skeleton.parse(T, bridge).sets().isEmpty(), "sets of another table are not this table's");
    }

    @Test
    void anEscapedStarIsALiteralStar() {
        assertEquals("62722a" + "00".repeat(13), hex(Skeleton.field("\"br\\*\"", "ifname")));
    }

    @Test
    void refusesWhatDoesNotFit() {
        Skeleton s = Skeleton.parse(T, PortmapRules.skeleton());
        assertThrows(IllegalArgumentException.class, () -> s.key(T, new Element("nope", "1", null)));
        assertThrows(IllegalArgumentException.class, () -> s.key(T, new Element("pm4", "tcp", "x")));
        assertThrows(IllegalArgumentException.class, () -> s.key(T, new Element("pm4", "tcp . 70000", "x")));
        assertThrows(IllegalArgumentException.class, () -> s.key(T, new Element("pm_local4", "fd00::1", null)));
        assertThrows(IllegalArgumentException.class, () -> s.data(T, new Element("pm4", "tcp . 1", null), null));
        assertThrows(IllegalArgumentException.class, () -> Skeleton.field("cni0", "ifname"));
        assertThrows(IllegalArgumentException.class, () -> Skeleton.field("\"a-very-long-name\"", "ifname"));
        assertThrows(IllegalArgumentException.class, () -> Skeleton.field("1", "mark"));
    }

    /** The batch is the script's element lines, in the same order. */
    @Test
    void theBatchSaysWhatTheScriptSays() {
        Skeleton s = Skeleton.parse(T, PortmapRules.skeleton());
        Element held = new Element("pm4", "tcp . 8080", "10.0.0.2 . 80");
        Element gone = new Element("pm_local4", "10.0.0.9", null);
        NftBatch b = ElementTransactions.batch(T, s, List.of(gone), ElementScript.puts("portmap n c eth0", Map.of(held, "10.0.0.7 . 80")));
        assertEquals(List.of(
                "add element inet jcni pm_local4 { 10.0.0.9 }",
                "delete element inet jcni pm_local4 { 10.0.0.9 }",
                "add element inet jcni pm4 { tcp . 8080 : 10.0.0.7 . 80 }",
                "delete element inet jcni pm4 { tcp . 8080 }",
                "add element inet jcni pm4 { tcp . 8080 : 10.0.0.2 . 80 }"), b.operations());
    }
}
