package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Errno;
import io.jcni.linux.Netns;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftException;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.plugins.meta.firewall.FirewallRules;
import io.jcni.plugins.meta.portmap.PortmapRules;
import io.jcni.types.Cidr;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Elements written over netlink read back by nft exactly as those the nft scripts of the earlier
 * implementation wrote: the same transactions, once as {@code nft -f} (namespace A), once through
 * {@link ElementStore} (namespace B); {@code nft list table} must print the same.
 */
@Tag("root")
class ElementStoreNetlinkTest {
    private static final String BRIDGE_TABLE = "bridge jcni";
    private static final String BRIDGE_SKELETON = """
            add table bridge jcni
            add set bridge jcni msc_ports { type ifname; }
            add set bridge jcni msc_macs { type ifname . ether_addr; }
            add chain bridge jcni msc { type filter hook prerouting priority -300; policy accept; }
            flush chain bridge jcni msc
            add rule bridge jcni msc iifname @msc_ports iifname . ether saddr != @msc_macs drop
            """;

    @TempDir
    Path base;

    /** One feature's change: who, its structure, its elements. */
    private record Change(String table, Owner owner, Function<List<Element>, String> skeleton, List<Element> elements) {}

    private static List<Change> changes() {
        List<Element> pm = List.of(
                new Element("pm4", "tcp . 8080", "10.0.0.2 . 80"),
                new Element("pm4h", "192.168.1.1 . udp . 53", "10.0.0.2 . 5353"),
                new Element("pm6", "sctp . 9000", "fd00::2 . 9000"),
                new Element("pm6h", "fd00::1 . tcp . 443", "fd00::2 . 8443"),
                new Element("pm_hair4", "10.0.0.2 . \"cni0\"", null),
                new Element("pm_self4", "10.0.0.2 . 10.0.0.2", null),
                new Element("pm_local4", "10.0.0.2", null),
                new Element("pm_all6", "fd00::2", null),
                new Element("pm_hair6", "fd00::2 . \"br\\*\"", null));
        List<Element> masq = Masquerade.elements(List.of(Cidr.parse("10.0.0.2/24"), Cidr.parse("fd00::2/64")));
        return List.of(
                new Change(ElementStore.TABLE, new Owner("portmap", "net", "c1", "eth0"), els -> PortmapRules.skeleton(), pm),
                new Change(ElementStore.TABLE, new Owner("firewall", "net", "c1", "eth0"),
                        els -> FirewallRules.skeleton("CNI-ADMIN", "cni0"),
                        List.of(new Element("fw4", "10.0.0.2", null), new Element("fw6", "fd00::2", null))),
                new Change(ElementStore.TABLE, new Owner("masq", "net", "c1", "eth0"), Masquerade::skeleton, masq),
                new Change(BRIDGE_TABLE, new Owner("macspoofchk", "net", "c1", "eth0"), els -> BRIDGE_SKELETON,
                        List.of(new Element("msc_ports", "\"veth1\"", null), new Element("msc_macs", "\"veth1\" . 0a:58:0a:00:00:02", null))),
                // a second owner claims one port mapping: it waits (the first claimant keeps it)
                new Change(ElementStore.TABLE, new Owner("portmap", "net", "c2", "eth0"), els -> PortmapRules.skeleton(),
                        List.of(new Element("pm4", "tcp . 8080", "10.0.0.3 . 80"))));
    }

    @Test
    void nftReadsBackWhatTheScriptsWrote() {
        String a = uniqueName();
        String b = uniqueName();
        try (Netns nsA = Netns.create(a); Netns nsB = Netns.create(b)) {
            Nft nftA = Nft.in(nsA);
            List<Change> changes = changes();
            for (Change c : changes.subList(0, changes.size() - 1)) {
                Map<Element, String> add = new LinkedHashMap<>();
                for (Element e : c.elements()) add.put(e, null);
                nftA.run(ElementScript.script(c.table(), c.skeleton().apply(c.elements()), c.owner().comment(), List.of(), add));
                new ElementStore(Nft.in(nsB), base, c.table()).put(c.owner(), c.skeleton(), c.elements());
            }
            // c2 waits for tcp . 8080: nothing of it reaches nftables.
            Change c2 = changes.getLast();
            new ElementStore(Nft.in(nsB), base).put(c2.owner(), c2.skeleton(), c2.elements());
            assertSameRuleset(a, b);
            assertTrue(list(b).contains("tcp . 8080 comment \"portmap net c1 eth0\" : 10.0.0.2 . 80"), list(b));

            // DEL of c1's portmap: its elements go, tcp . 8080 goes to c2 (its value over c1's), in both.
            Change pm = changes.get(0);
            List<Element> c1Rest = new ArrayList<>(pm.elements().subList(1, pm.elements().size()));
            Map<Element, String> handOver = Map.of(c2.elements().get(0), pm.elements().get(0).value());
            nftA.run(ElementScript.script(ElementStore.TABLE, PortmapRules.skeleton(), "", c1Rest, Map.of()));
            nftA.run(ElementScript.script(ElementStore.TABLE, "", c2.owner().comment(), List.of(), handOver));
            assertEquals(pm.elements(), new ElementStore(Nft.in(nsB), base).remove(pm.owner(), pm.skeleton()));
            assertSameRuleset(a, b);
            assertTrue(list(b).contains("tcp . 8080 comment \"portmap net c2 eth0\" : 10.0.0.3 . 80"), list(b));
        } finally {
            Netns.delete(a);
            Netns.delete(b);
        }
    }

    /** After the ruleset is flushed (a reboot, an administrator), the next change puts the structure back. */
    @Test
    void aFlushedRulesetIsRebuiltOnTheNextChange() {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            ElementStore store = new ElementStore(Nft.in(ns), base);
            Change fw = changes().get(1);
            store.put(fw.owner(), fw.skeleton(), fw.elements());
            assertTrue(Files.isRegularFile(store.dir().resolve(StateFiles.SKELETONS_FILE)));
            Nft.in(ns).run("flush ruleset\n");
            store.put(new Owner("firewall", "net", "c9", "eth0"), fw.skeleton(), List.of(new Element("fw4", "10.0.0.9", null)));
            String out = list(n);
            assertTrue(out.contains("jump CNI-ADMIN") && out.contains("10.0.0.9"), out);
            // DEL after another flush: no error, and nothing of the owner left
            Nft.in(ns).run("flush ruleset\n");
            assertEquals(fw.elements(), store.remove(fw.owner(), els -> FirewallRules.removalSkeleton()));
            store.verifyPresent(new Owner("firewall", "net", "c9", "eth0"), els -> FirewallRules.removalSkeleton());
        } catch (NftException expected) {
            // verifyPresent: c9's element went with the flush, and the message says which
            assertTrue(expected.getMessage().contains("10.0.0.9"), expected.getMessage());
        } finally {
            Netns.delete(n);
        }
    }

    /** A rule deleted by hand: CHECK says so, and the next ADD puts the structure back. */
    @Test
    void checkFindsAMissingRuleAndTheNextAddRestoresIt() {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            Nft nft = Nft.in(ns);
            ElementStore store = new ElementStore(nft, base);
            Change pm = changes().get(0);
            store.put(pm.owner(), pm.skeleton(), pm.elements());
            store.verifyPresent(pm.owner(), pm.skeleton());
            String handle = exec(List.of("ip", "netns", "exec", n, "/usr/sbin/nft", "-a", "list", "chain", "inet", "jcni", "pm_prerouting"))
                    .replaceAll("(?s).*# handle (\\d+)\\s*\\n\\s*}.*", "$1");
            nft.run("delete rule inet jcni pm_prerouting handle " + handle + "\n");
            NftException e = assertThrows(NftException.class, () -> store.verifyPresent(pm.owner(), pm.skeleton()));
            assertTrue(e.getMessage().contains("inet jcni pm_prerouting") && e.getMessage().contains("0 rules where jcni put 1"), e.getMessage());

            store.put(new Owner("portmap", "net", "c3", "eth0"), pm.skeleton(), List.of(new Element("pm4", "tcp . 7777", "10.0.0.4 . 80")));
            store.verifyPresent(pm.owner(), pm.skeleton());
            assertTrue(list(n).contains("fib daddr type local jump portmap"), list(n));
        } finally {
            Netns.delete(n);
        }
    }

    /** A key held with another value by someone jcni does not know: refused, named, and no state left behind. */
    @Test
    void aRefusedBatchNamesTheElementAndLeavesNoState() {
        String n = uniqueName();
        try (Netns ns = Netns.create(n)) {
            Nft nft = Nft.in(ns);
            nft.run(PortmapRules.skeleton() + "add element inet jcni pm4 { tcp . 9999 : 10.9.9.9 . 1 }\n");
            ElementStore store = new ElementStore(nft, base);
            Owner o = new Owner("portmap", "net", "c1", "eth0");
            NftException e = assertThrows(NftException.class,
                    () -> store.put(o, els -> PortmapRules.skeleton(), List.of(new Element("pm4", "tcp . 9999", "10.0.0.2 . 80"))));
            // EBUSY from older kernels, EEXIST from newer ones (6.x): a key with another value
            assertTrue(e.errno() == Errno.EBUSY || e.errno() == Errno.EEXIST, e.getMessage());
            assertTrue(e.getMessage().contains("add element inet jcni pm4 { tcp . 9999 : 10.0.0.2 . 80 }"), e.getMessage());
            assertEquals(List.of(), store.elements(o));
            assertTrue(list(n).contains("10.9.9.9 . 1"));
        } finally {
            Netns.delete(n);
        }
    }

    private static void assertSameRuleset(String a, String b) {
        assertEquals(normalized(list(a)), normalized(list(b)));
    }

    private static String list(String ns) {
        return exec(List.of("ip", "netns", "exec", ns, "/usr/sbin/nft", "list", "ruleset"));
    }

    /** Hash sets list their elements in hash order, which differs between namespaces: sorted. */
    static String normalized(String listing) {
        Matcher m = Pattern.compile("elements = \\{([^}]*)\\}", Pattern.DOTALL).matcher(listing);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String[] items = m.group(1).strip().split(",\\s*");
            Arrays.sort(items);
            m.appendReplacement(out, Matcher.quoteReplacement("elements = { " + String.join(", ", items) + " }"));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static String uniqueName() {
        return "jnl-" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    }

    private static String exec(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out;
        } catch (java.io.IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
