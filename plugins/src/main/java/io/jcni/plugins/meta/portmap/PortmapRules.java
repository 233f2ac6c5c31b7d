package io.jcni.plugins.meta.portmap;

import io.jcni.linux.nft.ElementStore.Element;
import io.jcni.spec.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * What portmap puts into the shared {@code inet jcni} table. Pure functions, no I/O.
 *
 * <p>The rules never change with the number of mappings: each mapping is one map element.
 * <pre>
 *   map pm4  { inet_proto . inet_service             : ipv4_addr . inet_service }   (any host IP)
 *   map pm4h { ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service }   (given hostIP)
 *   map pm6, pm6h                                     likewise for IPv6
 *   set pm_masq4 { ipv4_addr . ipv4_addr, interval }  (source range . container IP) to masquerade
 *   set pm_masq6                                      likewise for IPv6
 *
 *   chain pm_prerouting (nat prerouting -100): fib daddr type local jump portmap
 *   chain pm_output     (nat output -100):     fib daddr type local jump portmap
 *   chain portmap: dnat to (daddr . l4proto . dport) via pm4h, else (l4proto . dport) via pm4; same for v6
 *   chain pm_postrouting (nat postrouting 100): ct status dnat, saddr . daddr in pm_masq4/6: masquerade
 * </pre>
 * Masquerading (snat, the default): for each container, (its subnet . its IP), so hairpin traffic
 * and traffic from neighbours on the same bridge come back through the host and its DNAT; and
 * (127.0.0.0/8 . its IP) for connections to 127.0.0.1:hostPort. With masqAll: (0.0.0.0/0 . its IP).
 * Per packet: one hash lookup (dnat) and, for DNATed connections only, one interval lookup.
 */
public final class PortmapRules {
    private PortmapRules() {}

    static final String T = "inet jcni";

    /** The table structure; idempotent (sets and chains are added, base chains flushed and refilled). */
    public static String skeleton() {
        return """
                add table inet jcni
                add map inet jcni pm4 { type inet_proto . inet_service : ipv4_addr . inet_service; }
                add map inet jcni pm4h { type ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service; }
                add map inet jcni pm6 { type inet_proto . inet_service : ipv6_addr . inet_service; }
                add map inet jcni pm6h { type ipv6_addr . inet_proto . inet_service : ipv6_addr . inet_service; }
                add set inet jcni pm_masq4 { type ipv4_addr . ipv4_addr; flags interval; }
                add set inet jcni pm_masq6 { type ipv6_addr . ipv6_addr; flags interval; }
                add chain inet jcni portmap
                add chain inet jcni pm_prerouting { type nat hook prerouting priority -100; policy accept; }
                add chain inet jcni pm_output { type nat hook output priority -100; policy accept; }
                add chain inet jcni pm_postrouting { type nat hook postrouting priority 100; policy accept; }
                flush chain inet jcni portmap
                flush chain inet jcni pm_prerouting
                flush chain inet jcni pm_output
                flush chain inet jcni pm_postrouting
                add rule inet jcni pm_prerouting fib daddr type local jump portmap
                add rule inet jcni pm_output fib daddr type local jump portmap
                add rule inet jcni portmap meta nfproto ipv4 dnat ip to ip daddr . meta l4proto . th dport map @pm4h
                add rule inet jcni portmap meta nfproto ipv4 dnat ip to meta l4proto . th dport map @pm4
                add rule inet jcni portmap meta nfproto ipv6 dnat ip6 to ip6 daddr . meta l4proto . th dport map @pm6h
                add rule inet jcni portmap meta nfproto ipv6 dnat ip6 to meta l4proto . th dport map @pm6
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv4 ip saddr . ip daddr @pm_masq4 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv6 ip6 saddr . ip6 daddr @pm_masq6 masquerade
                """;
    }

    /** The number of rules {@link #skeleton()} installs: constant, whatever the number of mappings. */
    public static final int RULE_COUNT = 8;

    /** The elements one attachment owns, for its IPv4 and IPv6 addresses (either may be null). */
    public static List<Element> elements(PortmapConfig c, Cidr v4, Cidr v6) {
        List<Element> out = new ArrayList<>();
        for (Cidr ip : new Cidr[] {v4, v6}) {
            if (ip == null || c.mappings().isEmpty()) continue;
            boolean six = ip.isV6();
            String f = six ? "6" : "4";
            for (PortmapConfig.PortMapping m : c.mappings()) {
                if (m.hostIp() != null && m.hostIp().isV6() != six) continue; // the other family's mapping
                String value = ip.address() + " . " + m.containerPort();
                if (m.hostIp() == null) {
                    out.add(new Element("pm" + f, m.protocol() + " . " + m.hostPort(), value));
                } else {
                    out.add(new Element("pm" + f + "h", m.hostIp() + " . " + m.protocol() + " . " + m.hostPort(), value));
                }
            }
            if (c.snat()) {
                String set = "pm_masq" + f;
                if (c.masqAll()) {
                    out.add(new Element(set, (six ? "::/0" : "0.0.0.0/0") + " . " + ip.address(), null));
                } else {
                    out.add(new Element(set, ip.network() + "/" + ip.prefix() + " . " + ip.address(), null));
                    if (!six) out.add(new Element(set, "127.0.0.0/8 . " + ip.address(), null));
                }
            }
        }
        return out;
    }
}
