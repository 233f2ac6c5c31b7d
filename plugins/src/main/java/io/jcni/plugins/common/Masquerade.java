package io.jcni.plugins.common;

import io.jcni.linux.Netns;
import io.jcni.linux.nft.ElementStore;
import io.jcni.linux.nft.ElementStore.Element;
import io.jcni.linux.nft.ElementStore.Owner;
import io.jcni.linux.nft.Nft;
import io.jcni.spec.Attachment;
import io.jcni.spec.Cidr;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code ipMasq: true} for bridge and ptp, on nftables: traffic from the container's address to
 * anything but its own subnet and multicast leaves with the host's address, as the reference
 * plugins' {@code ip.SetupIPMasq} arranges. Flat: two rules per family in the shared
 * {@code inet jcni} table, and per attachment one element in {@code mq4} (its IP) and one in
 * {@code mq4_own} (its IP . its subnet); likewise mq6/mq6_own.
 *
 * <pre>
 *   chain mq_postrouting (nat postrouting 100):
 *     ip saddr . ip daddr @mq4_own return
 *     ip saddr @mq4 ip daddr != 224.0.0.0/4 masquerade
 *     (IPv6: the same with ff00::/8)
 * </pre>
 *
 * Usage from a plugin running in the host namespace (the usual case):
 * <pre>
 *   Masquerade.current().setup(netName, containerId, ifname, List.of(Cidr.parse("10.88.0.5/16")));
 *   Masquerade.current().teardown(netName, containerId, ifname);       // DEL: idempotent
 *   Masquerade.current().gc(netName, req.validAttachments());          // GC: removes orphans
 * </pre>
 * {@link #in(Netns, Path)} acts in another namespace and/or keeps its state under another
 * directory (tests). Failures are unchecked (NftException, UncheckedIOException): map them to a
 * CNI error where they are caught.
 */
public final class Masquerade {
    public static final String SCOPE = "masq";

    private final ElementStore store;

    private Masquerade(ElementStore store) {
        this.store = store;
    }

    /** Acts in the calling thread's namespace, with state under the default directory. */
    public static Masquerade current() {
        return new Masquerade(new ElementStore(Nft.current(), ElementStore.DEFAULT_BASE));
    }

    /**
     * @param ns the namespace to act in, or null for the calling thread's
     * @param dataDir base directory for ownership state, or null for the default
     */
    public static Masquerade in(Netns ns, Path dataDir) {
        Nft nft = ns == null ? Nft.current() : Nft.in(ns);
        return new Masquerade(new ElementStore(nft, dataDir == null ? ElementStore.DEFAULT_BASE : dataDir));
    }

    /** Masquerades traffic from each of {@code ips} (address with its subnet's prefix) leaving its subnet. */
    public void setup(String network, String containerId, String ifname, List<Cidr> ips) {
        store.put(new Owner(SCOPE, network, containerId, ifname), skeleton(), elements(ips));
    }

    /** Removes what {@link #setup} added for the attachment; nothing there is no error. */
    public void teardown(String network, String containerId, String ifname) {
        store.remove(new Owner(SCOPE, network, containerId, ifname), skeleton());
    }

    /** Whether the attachment's elements are recorded and present in nftables (for CHECK). */
    public boolean check(String network, String containerId, String ifname, List<Cidr> ips) {
        Owner o = new Owner(SCOPE, network, containerId, ifname);
        if (!new HashSet<>(store.elements(o)).containsAll(elements(ips))) return false;
        try {
            store.verifyPresent(o);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Tears down every attachment of {@code network} not in {@code valid}; returns how many. */
    public int gc(String network, Collection<Attachment> valid) {
        Set<Attachment> keep = new HashSet<>(valid);
        return store.gc(SCOPE, network, o -> keep.contains(new Attachment(o.containerId(), o.ifname())), skeleton()).size();
    }

    /** The table structure this feature needs; idempotent. */
    public static String skeleton() {
        return """
                add table inet jcni
                add set inet jcni mq4 { type ipv4_addr; }
                add set inet jcni mq4_own { type ipv4_addr . ipv4_addr; flags interval; }
                add set inet jcni mq6 { type ipv6_addr; }
                add set inet jcni mq6_own { type ipv6_addr . ipv6_addr; flags interval; }
                add chain inet jcni mq_postrouting { type nat hook postrouting priority 100; policy accept; }
                flush chain inet jcni mq_postrouting
                add rule inet jcni mq_postrouting meta nfproto ipv4 ip saddr . ip daddr @mq4_own return
                add rule inet jcni mq_postrouting meta nfproto ipv4 ip saddr @mq4 ip daddr != 224.0.0.0/4 masquerade
                add rule inet jcni mq_postrouting meta nfproto ipv6 ip6 saddr . ip6 daddr @mq6_own return
                add rule inet jcni mq_postrouting meta nfproto ipv6 ip6 saddr @mq6 ip6 daddr != ff00::/8 masquerade
                """;
    }

    /** The elements for {@code ips}. Pure. */
    public static List<Element> elements(List<Cidr> ips) {
        List<Element> out = new ArrayList<>();
        for (Cidr c : ips) {
            String f = c.isV6() ? "6" : "4";
            out.add(new Element("mq" + f, c.address().toString(), null));
            out.add(new Element("mq" + f + "_own", c.address() + " . " + c.network() + "/" + c.prefix(), null));
        }
        return out;
    }
}
