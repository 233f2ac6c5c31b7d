package io.jcni.plugins.meta.portmap;

import io.jcni.linux.nft.NftSyntax;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.List;

/**
 * What portmap puts into the shared {@code inet jcni} table. Pure functions, no I/O.
 *
 * <p>The rules never change with the number of mappings: each mapping is one map element, and
 * every per-container set is a hash set (no interval sets: see {@link io.jcni.plugins.common.nft.ElementStore}).
 * <pre>
 *   map pm4  { inet_proto . inet_service             : ipv4_addr . inet_service }   (any host IP)
 *   map pm4h { ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service }   (given hostIP)
 *   map pm6, pm6h                                     likewise for IPv6
 *   set pm_hair4  { ipv4_addr . ifname }  (container IP . host interface that reaches it)
 *   set pm_self4  { ipv4_addr . ipv4_addr } (container IP . container IP)
 *   set pm_local4 { ipv4_addr }           containers reachable from 127.0.0.1:hostPort
 *   set pm_all4   { ipv4_addr }           containers with masqAll
 *   set pm_hair6, pm_self6, pm_all6       likewise for IPv6 (no localhost: ::1 cannot be routed)
 *
 *   chain pm_prerouting (nat prerouting -100): fib daddr type local jump portmap
 *   chain pm_output     (nat output -100):     fib daddr type local jump portmap
 *   chain portmap: dnat to (daddr . l4proto . dport) via pm4h, else (l4proto . dport) via pm4; same for v6
 *   chain pm_postrouting (nat postrouting 100), for DNATed connections (ct status dnat):
 *     ip daddr . iifname @pm_hair4 masquerade         neighbours on the container's bridge
 *     ip saddr . ip daddr @pm_self4 masquerade         hairpin (with br_netfilter, a hairpin DNAT
 *                                                      is bridged and arrives on the bridge port)
 *     ip saddr 127.0.0.0/8 ip daddr @pm_local4 masquerade
 *     ip daddr @pm_all4 masquerade
 *     (IPv6 likewise)
 * </pre>
 * Hairpin: a connection that enters the host on the interface through which the container is
 * reached (its bridge, or its own veth for ptp) and is DNATed back out of it would be answered
 * directly, bypassing the host's un-DNAT; so it is masqueraded. This is what the reference
 * iptables rules achieve by matching the container's subnet as the source. Per packet: one hash
 * lookup for the DNAT and, for DNATed connections only, up to three more.
 */
public final class PortmapRules {
    private PortmapRules() {}

    /** The table structure; idempotent (sets and chains are added, base chains flushed and refilled). */
    public static String skeleton() {
        return """
                add table inet jcni
                add map inet jcni pm4 { type inet_proto . inet_service : ipv4_addr . inet_service; }
                add map inet jcni pm4h { type ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service; }
                add map inet jcni pm6 { type inet_proto . inet_service : ipv6_addr . inet_service; }
                add map inet jcni pm6h { type ipv6_addr . inet_proto . inet_service : ipv6_addr . inet_service; }
                add set inet jcni pm_hair4 { type ipv4_addr . ifname; }
                add set inet jcni pm_self4 { type ipv4_addr . ipv4_addr; }
                add set inet jcni pm_local4 { type ipv4_addr; }
                add set inet jcni pm_all4 { type ipv4_addr; }
                add set inet jcni pm_hair6 { type ipv6_addr . ifname; }
                add set inet jcni pm_self6 { type ipv6_addr . ipv6_addr; }
                add set inet jcni pm_all6 { type ipv6_addr; }
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
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv4 ip daddr . meta iifname @pm_hair4 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv4 ip saddr . ip daddr @pm_self4 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv4 ip saddr 127.0.0.0/8 ip daddr @pm_local4 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv4 ip daddr @pm_all4 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv6 ip6 daddr . meta iifname @pm_hair6 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv6 ip6 saddr . ip6 daddr @pm_self6 masquerade
                add rule inet jcni pm_postrouting ct status dnat meta nfproto ipv6 ip6 daddr @pm_all6 masquerade
                """;
    }

    /** The number of rules {@link #skeleton()} installs: constant, whatever the number of mappings. */
    public static final int RULE_COUNT = 13;

    /**
     * The elements one attachment owns, for its IPv4 and IPv6 addresses (either may be null).
     *
     * @param if4 the host interface routing to the IPv4 address (for hairpin), or null
     * @param if6 likewise for IPv6
     */
    public static List<Element> elements(PortmapConfig c, Cidr v4, String if4, Cidr v6, String if6) {
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
                if (c.masqAll()) {
                    out.add(new Element("pm_all" + f, ip.address().toString(), null));
                } else {
                    String itf = six ? if6 : if4;
                    if (itf != null) out.add(new Element("pm_hair" + f, ip.address() + " . " + NftSyntax.ifname(itf), null));
                    out.add(new Element("pm_self" + f, ip.address() + " . " + ip.address(), null));
                    if (!six) out.add(new Element("pm_local4", ip.address().toString(), null));
                }
            }
        }
        return out;
    }
}
