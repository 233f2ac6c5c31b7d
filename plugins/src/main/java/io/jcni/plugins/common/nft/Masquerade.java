package io.jcni.plugins.common.nft;

import io.jcni.linux.Netns;
import io.jcni.linux.nft.Nft;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code ipMasq: true} for bridge and ptp, on nftables: traffic from the container's address to
 * anything but its own subnet and multicast leaves with the host's address, as the reference
 * plugins' {@code ip.SetupIPMasq} arranges.
 *
 * <p>Flat: per attachment two hash-set elements; no interval sets (their kernel backend rebuilds on
 * every commit, see {@link ElementStore}). "Not its own subnet" is a hash lookup of
 * (source . destination masked to the subnet's length), so there is one small base chain per
 * prefix length in use (typically one: /16 or /24), created when first needed:
 * <pre>
 *   set mq4_24 { ipv4_addr }                      container IPs with a /24 subnet
 *   set mq4_own_24 { ipv4_addr . ipv4_addr }      (container IP . its network address)
 *   chain mq4_24 (nat postrouting 100):
 *     ip saddr . ip daddr &amp; 255.255.255.0 @mq4_own_24 return
 *     ip saddr @mq4_24 ip daddr != 224.0.0.0/4 masquerade
 *   (IPv6: mq6_64 ... with ff00::/8)
 * </pre>
 *
 * Usage from a plugin running in the host namespace (the usual case):
 * <pre>
 *   Masquerade.current().setup(netName, containerId, ifname, List.of(Cidr.parse("10.88.0.5/16")));
 *   Masquerade.current().teardown(netName, containerId, ifname);       // DEL: idempotent, needs no IPs
 *   Masquerade.current().gc(netName, req.validAttachments());          // GC: removes orphans
 *   Masquerade.current().check(netName, containerId, ifname, ips);     // CHECK: true when in place
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
        return new Masquerade(ElementStore.at(nft, dataDir, ElementStore.TABLE));
    }

    /** Masquerades traffic from each of {@code ips} (address with its subnet's prefix) leaving its subnet. */
    public void setup(String network, String containerId, String ifname, List<Cidr> ips) {
        store.put(new Owner(SCOPE, network, containerId, ifname), Masquerade::skeleton, elements(ips));
    }

    /** Removes what {@link #setup} added for the attachment; nothing there is no error. */
    public void teardown(String network, String containerId, String ifname) {
        store.remove(new Owner(SCOPE, network, containerId, ifname), Masquerade::skeleton);
    }

    /** Whether the attachment's elements are recorded and present in nftables (for CHECK). */
    public boolean check(String network, String containerId, String ifname, List<Cidr> ips) {
        Owner o = new Owner(SCOPE, network, containerId, ifname);
        if (!store.missing(o, elements(ips)).isEmpty()) return false;
        try {
            store.verifyPresent(o, Masquerade::skeleton);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Tears down every attachment of {@code network} not in {@code valid}; returns how many. */
    public int gc(String network, Collection<Attachment> valid) {
        return store.gc(SCOPE, network, valid, Masquerade::skeleton).size();
    }

    /** The structure the given elements need (one chain and two sets per family and prefix length); idempotent. */
    public static String skeleton(List<Element> elements) {
        TreeSet<String> kinds = new TreeSet<>();
        for (Element e : elements) if (!e.set().contains("_own_")) kinds.add(e.set().substring(2)); // "4_24"
        StringBuilder b = new StringBuilder("add table inet jcni\n");
        for (String k : kinds) {
            boolean six = k.startsWith("6");
            int len = Integer.parseInt(k.substring(2));
            String mask = mask(six, len);
            String ip = six ? "ip6" : "ip";
            String type = six ? "ipv6_addr" : "ipv4_addr";
            String chain = "mq" + k;
            b.append("add set inet jcni ").append(chain).append(" { type ").append(type).append("; }\n");
            b.append("add set inet jcni mq").append(k.charAt(0)).append("_own_").append(len).append(" { type ").append(type)
                    .append(" . ").append(type).append("; }\n");
            b.append("add chain inet jcni ").append(chain).append(" { type nat hook postrouting priority 100; policy accept; }\n");
            b.append("flush chain inet jcni ").append(chain).append('\n');
            b.append("add rule inet jcni ").append(chain).append(" meta nfproto ").append(six ? "ipv6 " : "ipv4 ").append(ip)
                    .append(" saddr . ").append(ip).append(" daddr & ").append(mask).append(" @mq").append(k.charAt(0))
                    .append("_own_").append(len).append(" return\n");
            b.append("add rule inet jcni ").append(chain).append(" meta nfproto ").append(six ? "ipv6 " : "ipv4 ").append(ip)
                    .append(" saddr @").append(chain).append(' ').append(ip).append(" daddr != ")
                    .append(six ? "ff00::/8" : "224.0.0.0/4").append(" masquerade\n");
        }
        return b.toString();
    }

    /** The netmask of a prefix length, in nft syntax. */
    static String mask(boolean six, int len) {
        byte[] m = new byte[six ? 16 : 4];
        for (int i = 0; i < len; i++) m[i / 8] |= (byte) (0x80 >> (i % 8));
        return new IpAddr(m).toString();
    }

    /** The elements for {@code ips}. Pure. */
    public static List<Element> elements(List<Cidr> ips) {
        List<Element> out = new ArrayList<>();
        for (Cidr c : ips) {
            String f = (c.isV6() ? "6" : "4");
            out.add(new Element("mq" + f + "_" + c.prefix(), c.address().toString(), null));
            out.add(new Element("mq" + f + "_own_" + c.prefix(), c.address() + " . " + c.network(), null));
        }
        return out;
    }
}
