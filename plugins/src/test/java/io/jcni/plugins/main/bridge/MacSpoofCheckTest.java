package io.jcni.plugins.main.bridge;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.MacAddress;
import io.jcni.plugins.common.nft.ElementScript;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.linux.nft.NftSyntax;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What macspoofchk writes to nft, without root: the fixed rule and the per-attachment elements. */
class MacSpoofCheckTest {
    private static final byte[] MAC = MacAddress.parse("0a:58:0a:32:00:02").bytes();

    @Test
    void oneFixedRuleInABridgeTableBeforeTheBridgeDecision() {
        assertEquals("""
                add table bridge jcni
                add set bridge jcni msc_ports { type ifname; }
                add set bridge jcni msc_macs { type ifname . ether_addr; }
                add chain bridge jcni msc { type filter hook prerouting priority -300; policy accept; }
                flush chain bridge jcni msc
                add rule bridge jcni msc iifname @msc_ports iifname . ether saddr != @msc_macs drop
                """, MacSpoofCheck.skeleton(List.of()));
        // The same whatever the elements: its size never grows with the number of containers.
        assertEquals(MacSpoofCheck.skeleton(List.of()), MacSpoofCheck.skeleton(MacSpoofCheck.elements("veth0011aabb", MAC)));
    }

    @Test
    void twoElementsPerAttachment() {
        assertEquals(List.of(new Element("msc_ports", "\"veth0011aabb\"", null),
                        new Element("msc_macs", "\"veth0011aabb\" . 0a:58:0a:32:00:02", null)),
                MacSpoofCheck.elements("veth0011aabb", MAC));
    }

    @Test
    void theTransactionNamesTheBridgeTableAndOnlyTheAttachmentsElements() {
        Map<Element, String> add = new LinkedHashMap<>();
        for (Element e : MacSpoofCheck.elements("veth0011aabb", MAC)) add.put(e, null);
        String script = ElementScript.script(MacSpoofCheck.TABLE, "", "macspoofchk n c eth0", List.of(), add);
        assertEquals("""
                add element bridge jcni msc_ports { "veth0011aabb" }
                delete element bridge jcni msc_ports { "veth0011aabb" }
                add element bridge jcni msc_ports { "veth0011aabb" comment "macspoofchk n c eth0" }
                add element bridge jcni msc_macs { "veth0011aabb" . 0a:58:0a:32:00:02 }
                delete element bridge jcni msc_macs { "veth0011aabb" . 0a:58:0a:32:00:02 }
                add element bridge jcni msc_macs { "veth0011aabb" . 0a:58:0a:32:00:02 comment "macspoofchk n c eth0" }
                """, script);
        String del = ElementScript.script(MacSpoofCheck.TABLE, "", "c", MacSpoofCheck.elements("veth0011aabb", MAC), Map.of());
        assertEquals(4, del.lines().count());
        assertFalse(del.contains("inet jcni"));
    }

    @Test
    void namesAndAddressesAreCheckedBeforeTheyReachAScript() {
        // A trailing '*' would make nft match every interface with that prefix: escaped.
        assertEquals("\"veth\\*\" . 0a:58:0a:32:00:02", MacSpoofCheck.elements("veth*", MAC).get(1).key());
        for (String bad : List.of("", "a\"b", "a b", "a\\b", "x".repeat(16), "vé")) {
            assertThrows(IllegalArgumentException.class, () -> MacSpoofCheck.elements(bad, MAC), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> MacSpoofCheck.elements("veth0", new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> NftSyntax.etherAddr(new byte[5]));
        assertEquals("ff:00:0a:58:0a:32", NftSyntax.etherAddr(new byte[] {-1, 0, 10, 88, 10, 50}));
    }
}
