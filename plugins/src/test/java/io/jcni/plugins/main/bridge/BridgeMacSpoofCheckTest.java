package io.jcni.plugins.main.bridge;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** bridge {@code macspoofchk: true} in real namespaces: a private "host" netns with containers on its bridge. */
@Tag("root")
class BridgeMacSpoofCheckTest {
    private NetWorld w;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("static");
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    private String conf(String address, boolean spoofCheck) {
        return """
            {"cniVersion":"1.1.0","name":"snet","type":"bridge","bridge":"sbr0","isGateway":true,"macspoofchk":%s,"dataDir":"%s",
             "ipam":{"type":"static","addresses":[{"address":"%s","gateway":"10.52.0.1"}]}}
            """.formatted(spoofCheck, w.dir.resolve("nft"), address);
    }

    private static String hostVeth(Map<String, Object> result) {
        return (String) Json.asObject(Json.asList(result.get("interfaces")).get(1)).get("name");
    }

    private static String containerMac(Map<String, Object> result) {
        return (String) Json.asObject(Json.asList(result.get("interfaces")).get(2)).get("mac");
    }

    /** Both sets of {@code table bridge jcni}, as nft prints them (JSON), or "" when there is no table. */
    private String elements() {
        StringBuilder b = new StringBuilder();
        for (String set : List.of(MacSpoofCheck.PORTS, MacSpoofCheck.MACS)) {
            NetWorld.Exec e = NetWorld.in(w.hostName, "nft", "-j", "list", "set", "bridge", "jcni", set);
            if (e.rc() == 0) b.append(e.out());
        }
        return b.toString();
    }

    private void setMac(String ns, String mac) {
        assertEquals(0, NetWorld.in(ns, "ip", "link", "set", "eth0", "address", mac).rc());
        // Forget learned addresses, so a ping depends only on what the bridge lets through.
        NetWorld.in(ns, "ip", "neigh", "flush", "all");
        NetWorld.in(w.hostName, "ip", "neigh", "flush", "all");
    }

    private Map<String, String> gcEnv() {
        Map<String, String> gc = new HashMap<>(w.env("GC", "", null, ""));
        gc.remove("CNI_CONTAINERID");
        gc.remove("CNI_IFNAME");
        return gc;
    }

    @Test
    void framesWithAnotherSourceMacAreDroppedOnlyFromCheckedPorts() {
        String a = w.container();
        String b = w.container();
        String confA = conf("10.52.0.2/24", true);
        String confB = conf("10.52.0.3/24", false);
        Map<String, Object> ra = w.ok("bridge", w.env("ADD", "a", a, "eth0"), confA);
        Map<String, Object> rb = w.ok("bridge", w.env("ADD", "b", b, "eth0"), confB);
        String vethA = hostVeth(ra);
        String macA = containerMac(ra);

        String els = elements();
        assertTrue(els.contains("\"" + vethA + "\"") && els.contains(macA), els);
        assertFalse(els.contains(hostVeth(rb)), "no elements for the neighbour without macspoofchk: " + els);
        assertTrue(NetWorld.ping(a, "10.52.0.3"), "a -> its neighbour");
        assertTrue(NetWorld.ping(a, "10.52.0.1"), "a -> the gateway on the bridge");

        setMac(a, "0a:58:0a:34:00:99");
        assertFalse(NetWorld.ping(a, "10.52.0.3"), "a's frames with a spoofed source MAC are dropped");
        assertFalse(NetWorld.ping(a, "10.52.0.1"), "also those to the host");
        assertFalse(NetWorld.ping(b, "10.52.0.2"), "and its replies");

        setMac(b, "0a:58:0a:34:00:98");
        assertTrue(NetWorld.ping(b, "10.52.0.1"), "b has no macspoofchk: another MAC passes");

        setMac(a, macA);
        assertTrue(NetWorld.ping(a, "10.52.0.1"), "a's own MAC passes again");
    }

    @Test
    void delRemovesTheElementsAndReAddWorks() {
        String a = w.container();
        String confA = conf("10.52.0.2/24", true);
        String vethA = hostVeth(w.ok("bridge", w.env("ADD", "a", a, "eth0"), confA));
        assertTrue(elements().contains(vethA));

        w.ok("bridge", w.env("DEL", "a", a, "eth0"), confA);
        w.ok("bridge", w.env("DEL", "a", a, "eth0"), confA);
        assertFalse(elements().contains(vethA), elements());
        assertFalse(elements().contains("\"elem\""), "no element left: " + elements());

        Map<String, Object> again = w.ok("bridge", w.env("ADD", "a", a, "eth0"), confA);
        assertTrue(elements().contains(hostVeth(again)));
        assertTrue(NetWorld.ping(a, "10.52.0.1"));

        // DEL works from the attachment's state: a config edited meanwhile to macspoofchk false
        // still removes the elements.
        w.ok("bridge", w.env("DEL", "a", a, "eth0"), conf("10.52.0.2/24", false));
        assertFalse(elements().contains("\"elem\""), elements());
    }

    @Test
    void delWithoutTheContainerNetnsStillRemovesTheElements() {
        String a = w.container();
        String confA = conf("10.52.0.2/24", true);
        w.ok("bridge", w.env("ADD", "a", a, "eth0"), confA);
        w.deleteContainer(a);
        w.ok("bridge", w.env("DEL", "a", a, "eth0"), confA);
        assertFalse(elements().contains("\"elem\""), elements());
    }

    @Test
    void gcRemovesTheElementsOfAttachmentsNotListed() {
        String a = w.container();
        String b = w.container();
        String confA = conf("10.52.0.2/24", true);
        String confB = conf("10.52.0.3/24", true);
        String vethA = hostVeth(w.ok("bridge", w.env("ADD", "a", a, "eth0"), confA));
        String vethB = hostVeth(w.ok("bridge", w.env("ADD", "b", b, "eth0"), confB));

        // No valid list: nothing changes.
        assertEquals(7L, w.fails("bridge", gcEnv(), confB).get("code"));
        assertTrue(elements().contains(vethA) && elements().contains(vethB));

        w.ok("bridge", gcEnv(), confB.replaceFirst("\\{", "{\"cni.dev/valid-attachments\":[{\"containerID\":\"b\",\"ifname\":\"eth0\"}],"));
        String els = elements();
        assertFalse(els.contains(vethA), els);
        assertTrue(els.contains(vethB), els);
        assertTrue(NetWorld.ping(b, "10.52.0.1"), "b is kept and still checked");
    }

    /**
     * The reference plugin (1.1.1) with the same key in the same kind of world: it filters the same
     * way (its own table bridge nat, a chain pair and rule per container) and its DEL removes its chains.
     */
    @Test
    void theReferencePluginDropsTheSameFrames() throws Exception {
        String a = w.container();
        String ref = """
            {"cniVersion":"1.0.0","name":"snet","type":"bridge","bridge":"sbr0","isGateway":true,"macspoofchk":true,
             "ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"10.52.0.0/24"}]]}}
            """.formatted(w.dir.resolve("ref-ipam"));
        Map<String, Object> r = Json.parseObject(w.reference("bridge", w.env("ADD", "a", a, "eth0"), ref));
        try {
            String table = NetWorld.in(w.hostName, "nft", "list", "table", "bridge", "nat").out();
            assertTrue(table.contains(containerMac(r)), table);
            assertTrue(NetWorld.ping(a, "10.52.0.1"));
            setMac(a, "0a:58:0a:34:00:99");
            assertFalse(NetWorld.ping(a, "10.52.0.1"), "the reference drops a spoofed source MAC too");
        } finally {
            w.reference("bridge", w.env("DEL", "a", a, "eth0"), ref);
        }
        assertFalse(NetWorld.in(w.hostName, "nft", "list", "table", "bridge", "nat").out().contains("cni-br-iface"));
    }
}
