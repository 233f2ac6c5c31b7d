package io.jcni.plugins.meta.firewall;

import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * What the firewall writes into iptables' own {@code filter} table, word for word as the reference
 * plugin's iptables backend (so a host moving between the two finds the same rules), and how
 * those rules read back from {@code iptables -S}. Pure.
 * <pre>
 *   -A FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD           (inserted first)
 *   -A CNI-FORWARD -m comment --comment "CNI firewall plugin admin overrides" -j CNI-ADMIN   (first)
 *   -A CNI-FORWARD -d IP/32 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT      per container address
 *   -A CNI-FORWARD -s IP/32 -j ACCEPT
 * </pre>
 * Argument lists are what follows the program's name ({@code iptables} or {@code ip6tables}).
 */
public final class IptablesRules {
    private IptablesRules() {}

    public static final String FORWARD = "FORWARD";
    public static final String CHAIN = "CNI-FORWARD";
    static final String FORWARD_COMMENT = "CNI firewall plugin rules";
    static final String ADMIN_COMMENT = "CNI firewall plugin admin overrides";
    /** Every command waits for the xtables lock, as go-iptables' {@code --wait}. */
    private static final List<String> PREFIX = List.of("-w", "-t", "filter");

    /** The rule in FORWARD that sends forwarded traffic through CNI-FORWARD. */
    public static List<String> forwardJump() {
        return List.of("-m", "comment", "--comment", FORWARD_COMMENT, "-j", CHAIN);
    }

    /** The first rule of CNI-FORWARD: the administrator's chain decides before the allow rules. */
    public static List<String> adminJump(String adminChain) {
        return List.of("-m", "comment", "--comment", ADMIN_COMMENT, "-j", adminChain);
    }

    /** An address as a rule names it: a host prefix ({@code /32}, {@code /128}), as the reference. */
    public static String host(IpAddr ip) {
        return ip + (ip.isV6() ? "/128" : "/32");
    }

    /** The two rules that let one container address out and its replies back in. */
    public static List<List<String>> addressRules(String host) {
        return List.of(
                List.of("-d", host, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"),
                List.of("-s", host, "-j", "ACCEPT"));
    }

    /** The distinct host prefixes of {@code prev}'s addresses of one family, in order. */
    public static List<String> hosts(Result prev, boolean v6) {
        List<String> out = new ArrayList<>();
        if (prev == null) return out;
        for (Result.IpConfig ip : prev.ips()) {
            IpAddr a = ip.address().address();
            String h = host(a);
            if (a.isV6() == v6 && !out.contains(h)) out.add(h);
        }
        return out;
    }

    /** The host prefixes of addresses given as text ({@link FirewallRules#elements} keys), one family. */
    public static List<String> hosts(Collection<String> addresses, boolean v6) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        for (String s : addresses) {
            IpAddr a = IpAddr.tryParse(s);
            if (a != null && a.isV6() == v6) out.add(host(a));
        }
        return new ArrayList<>(out);
    }

    /** {@code -w -t filter -S CHAIN}: the chain's rules, or exit 1 when it does not exist. */
    public static List<String> list(String chain) {
        return command("-S", chain, List.of());
    }

    public static List<String> newChain(String chain) {
        return command("-N", chain, List.of());
    }

    /** {@code -C}: exit 0 when the rule is in the chain, 1 when not. */
    public static List<String> exists(String chain, List<String> rule) {
        return command("-C", chain, rule);
    }

    public static List<String> append(String chain, List<String> rule) {
        return command("-A", chain, rule);
    }

    public static List<String> insertFirst(String chain, List<String> rule) {
        List<String> a = new ArrayList<>(PREFIX);
        a.add("-I");
        a.add(chain);
        a.add("1");
        a.addAll(rule);
        return a;
    }

    public static List<String> delete(String chain, List<String> rule) {
        return command("-D", chain, rule);
    }

    private static List<String> command(String op, String chain, List<String> rule) {
        List<String> a = new ArrayList<>(PREFIX);
        a.add(op);
        a.add(chain);
        a.addAll(rule);
        return a;
    }

    /**
     * The rules of {@code chain} in an {@code iptables -S} listing, each as the words after
     * {@code -A CHAIN} (the form {@link #append} takes), quotes removed.
     */
    public static List<List<String>> rules(String listing, String chain) {
        List<List<String>> out = new ArrayList<>();
        for (String line : listing.split("\n")) {
            List<String> w = words(line.strip());
            if (w.size() >= 2 && w.get(0).equals("-A") && w.get(1).equals(chain)) out.add(w.subList(2, w.size()));
        }
        return out;
    }

    /**
     * The host prefix a rule of CNI-FORWARD allows, when it has exactly the shape of one of
     * {@link #addressRules}; null for any other rule (the admin jump, an administrator's own).
     */
    public static String addressOf(List<String> rule) {
        if (rule.size() < 2) return null;
        String h = rule.get(1);
        if (!h.endsWith("/32") && !h.endsWith("/128")) return null;
        if (IpAddr.tryParse(h.substring(0, h.lastIndexOf('/'))) == null) return null;
        for (List<String> ours : addressRules(h)) if (ours.equals(rule)) return h;
        return null;
    }

    /**
     * Splits a line of {@code iptables -S} into words: iptables puts double quotes around an
     * argument with spaces (a comment) and escapes a quote inside with a backslash.
     */
    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean quoted = false;
        boolean inWord = false;
        for (int i = 0; i < line.length(); i++) {
            char ch = line.charAt(i);
            if (quoted) {
                if (ch == '\\' && i + 1 < line.length()) w.append(line.charAt(++i));
                else if (ch == '"') quoted = false;
                else w.append(ch);
            } else if (ch == '"') {
                quoted = true;
                inWord = true;
            } else if (ch == ' ' || ch == '\t') {
                if (inWord) out.add(w.toString());
                w.setLength(0);
                inWord = false;
            } else {
                w.append(ch);
                inWord = true;
            }
        }
        if (inWord) out.add(w.toString());
        return out;
    }
}
