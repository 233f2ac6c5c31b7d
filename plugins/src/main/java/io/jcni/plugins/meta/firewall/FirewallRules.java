package io.jcni.plugins.meta.firewall;

import io.jcni.linux.nft.NftSyntax;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.types.Cidr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * What the firewall puts into {@code inet jcni}. Pure.
 * <pre>
 *   set fw4 { ipv4_addr }, fw6 { ipv6_addr }        container addresses (one element each, owned)
 *   set fw_iso { ifname }, fw_iso_same { ifname . ifname }   bridges with ingressPolicy same-bridge
 *   chain ADMIN                                       the administrator's, created empty, never flushed
 *   chain fw_forward (filter forward 0, policy accept):
 *     iifname @fw_iso oifname @fw_iso iifname . oifname != @fw_iso_same drop
 *     jump ADMIN
 *     ip daddr @fw4 ct state established,related accept
 *     ip saddr @fw4 accept
 *     (likewise ip6 / fw6)
 * </pre>
 * The drop is upstream's CNI-ISOLATION-STAGE-1/2 pair in one rule: traffic routed from one
 * isolated bridge to a different isolated bridge. As upstream, a bridge stays isolated once added
 * (other containers may still use it), so bridge elements are not removed by DEL.
 */
public final class FirewallRules {
    private FirewallRules() {}

    public static final int RULE_COUNT = 6;

    /** The structure, plus the bridge's isolation elements when {@code isolatedBridge} is not null. */
    public static String skeleton(String adminChain, String isolatedBridge) {
        String s = """
                add table inet jcni
                add set inet jcni fw4 { type ipv4_addr; }
                add set inet jcni fw6 { type ipv6_addr; }
                add set inet jcni fw_iso { type ifname; }
                add set inet jcni fw_iso_same { type ifname . ifname; }
                add chain inet jcni ADMIN
                add chain inet jcni fw_forward { type filter hook forward priority 0; policy accept; }
                flush chain inet jcni fw_forward
                add rule inet jcni fw_forward iifname @fw_iso oifname @fw_iso iifname . oifname != @fw_iso_same drop
                add rule inet jcni fw_forward jump ADMIN
                add rule inet jcni fw_forward meta nfproto ipv4 ip daddr @fw4 ct state established,related accept
                add rule inet jcni fw_forward meta nfproto ipv4 ip saddr @fw4 accept
                add rule inet jcni fw_forward meta nfproto ipv6 ip6 daddr @fw6 ct state established,related accept
                add rule inet jcni fw_forward meta nfproto ipv6 ip6 saddr @fw6 accept
                """.replace("ADMIN", adminChain);
        if (isolatedBridge != null) {
            String q = NftSyntax.ifname(isolatedBridge);
            s += "add element inet jcni fw_iso { " + q + " }\n"
                    + "add element inet jcni fw_iso_same { " + q + " . " + q + " }\n";
        }
        return s;
    }

    /**
     * The structure DEL and GC need to remove elements: the table and the address sets, nothing
     * that depends on the config (a config that ADD could not apply must not block DEL).
     */
    public static String removalSkeleton() {
        return """
                add table inet jcni
                add set inet jcni fw4 { type ipv4_addr; }
                add set inet jcni fw6 { type ipv6_addr; }
                """;
    }

    /** One element per distinct container address in prevResult (all of them, as upstream). */
    public static List<Element> elements(Result prev) {
        LinkedHashSet<Element> out = new LinkedHashSet<>();
        for (Result.IpConfig ip : prev.ips()) {
            Cidr c = ip.address();
            out.add(new Element(c.isV6() ? "fw6" : "fw4", c.address().toString(), null));
        }
        return new ArrayList<>(out);
    }
}
