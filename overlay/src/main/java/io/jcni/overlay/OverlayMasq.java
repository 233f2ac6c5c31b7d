package io.jcni.overlay;

import io.jcni.types.Cidr;

/**
 * {@code --ip-masq}: flanneld's four masquerade rules, as one chain of jcni's nftables table
 * {@code inet jcni} (where the plugins' masquerade and port mappings live too):
 * <pre>
 *   pod network -> pod network          return      (pod to pod keeps its source)
 *   pod network -> not multicast        masquerade  (pods leaving the cluster network)
 *   elsewhere   -> our subnet           return      (traffic to our pods from outside)
 *   elsewhere   -> pod network          masquerade  (host-originated traffic to remote pods)
 * </pre>
 * With IPv6 the same four rules follow for the IPv6 network and subnet ({@code ip6}, multicast
 * ff00::/8), in the same chain: the {@code inet} table sees both families. An IPv6-only network
 * has only those. Pure text; the agent runs it with {@code Nft}. Re-running replaces the chain's
 * rules atomically.
 */
public final class OverlayMasq {
    public static final String CHAIN = "overlay_masq";

    private OverlayMasq() {}

    public static String setup(Cidr network, Cidr subnet) {
        return setup(network, subnet, null, null);
    }

    /** @param network null without IPv4; {@code network6} null without IPv6 */
    public static String setup(Cidr network, Cidr subnet, Cidr network6, Cidr subnet6) {
        String c = "inet jcni " + CHAIN;
        String text = "add table inet jcni\n"
                + "add chain " + c + " { type nat hook postrouting priority 100; policy accept; }\n"
                + "flush chain " + c + "\n";
        if (network != null) text += rules(c, "ip", network, subnet, "224.0.0.0/4");
        if (network6 != null) text += rules(c, "ip6", network6, subnet6, "ff00::/8");
        return text;
    }

    private static String rules(String c, String family, Cidr network, Cidr subnet, String multicast) {
        String n = network.masked().toString(), s = subnet.masked().toString();
        return "add rule " + c + " " + family + " saddr " + n + " " + family + " daddr " + n + " return\n"
                + "add rule " + c + " " + family + " saddr " + n + " " + family + " daddr != " + multicast + " masquerade fully-random\n"
                + "add rule " + c + " " + family + " saddr != " + n + " " + family + " daddr " + s + " return\n"
                + "add rule " + c + " " + family + " saddr != " + n + " " + family + " daddr " + n + " masquerade fully-random\n";
    }

    /** Removes the chain; idempotent (the add makes the delete always find it). */
    public static String teardown() {
        String c = "inet jcni " + CHAIN;
        return "add table inet jcni\n"
                + "add chain " + c + " { type nat hook postrouting priority 100; policy accept; }\n"
                + "delete chain " + c + "\n";
    }
}
