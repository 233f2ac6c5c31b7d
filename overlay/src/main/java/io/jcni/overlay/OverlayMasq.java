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
 * Pure text; the agent runs it with {@code Nft}. Re-running replaces the chain's rules atomically.
 */
public final class OverlayMasq {
    public static final String CHAIN = "overlay_masq";

    private OverlayMasq() {}

    public static String setup(Cidr network, Cidr subnet) {
        String n = network.masked().toString(), s = subnet.masked().toString();
        String c = "inet jcni " + CHAIN;
        return "add table inet jcni\n"
                + "add chain " + c + " { type nat hook postrouting priority 100; policy accept; }\n"
                + "flush chain " + c + "\n"
                + "add rule " + c + " ip saddr " + n + " ip daddr " + n + " return\n"
                + "add rule " + c + " ip saddr " + n + " ip daddr != 224.0.0.0/4 masquerade fully-random\n"
                + "add rule " + c + " ip saddr != " + n + " ip daddr " + s + " return\n"
                + "add rule " + c + " ip saddr != " + n + " ip daddr " + n + " masquerade fully-random\n";
    }

    /** Removes the chain; idempotent (the add makes the delete always find it). */
    public static String teardown() {
        String c = "inet jcni " + CHAIN;
        return "add table inet jcni\n"
                + "add chain " + c + " { type nat hook postrouting priority 100; policy accept; }\n"
                + "delete chain " + c + "\n";
    }
}
