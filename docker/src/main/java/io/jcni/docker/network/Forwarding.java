package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Lets a network's traffic through dockerd's iptables {@code FORWARD} policy.
 *
 * <p>dockerd sets {@code iptables -P FORWARD DROP} and loads br_netfilter, so even frames between
 * two containers on one of our bridges pass that chain and are dropped. jcni's own filtering is in
 * nftables (table {@code inet jcni}), and an accept there does not undo a drop in iptables' table,
 * so the driver adds what Docker's bridge driver adds for docker0, in a chain of its own:
 * {@code -A FORWARD -j JCNI-FORWARD}, then per bridge traffic out of it (not for --internal, which
 * only gets traffic within the bridge), and replies and published-port connections into it.
 * A generated, non-internal network is also masqueraded here, once, as Docker does for docker0:
 * {@code -t nat -A POSTROUTING -j JCNI-MASQ}, {@code -A JCNI-MASQ -s SUBNET ! -o BRIDGE -j MASQUERADE}.
 * Nothing is done when there is no iptables or no filter table.
 */
public final class Forwarding {
    static final String CHAIN = "JCNI-FORWARD";
    static final String MASQ = "JCNI-MASQ";
    private static final List<String> TOOLS = List.of("/usr/sbin/iptables", "/usr/sbin/ip6tables");

    private Forwarding() {}

    /** The rules for one bridge, as iptables arguments after {@code -A CHAIN} (pure). */
    static List<List<String>> rules(String bridge, boolean internal) {
        List<List<String>> r = new ArrayList<>();
        if (internal) {
            r.add(List.of("-i", bridge, "-o", bridge, "-j", "ACCEPT"));
        } else {
            r.add(List.of("-i", bridge, "-j", "ACCEPT"));
            r.add(List.of("-o", bridge, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED,DNAT", "-j", "ACCEPT"));
        }
        return r;
    }

    /** The masquerade rules for a network's subnets of one family, as arguments after {@code -A JCNI-MASQ} (pure). */
    static List<List<String>> masquerade(String bridge, List<String> subnets) {
        List<List<String>> r = new ArrayList<>();
        for (String s : subnets) r.add(List.of("-s", s, "!", "-o", bridge, "-j", "MASQUERADE"));
        return r;
    }

    /**
     * @param masq4 IPv4 subnets to masquerade (empty for none)
     * @param masq6 IPv6 subnets to masquerade
     */
    public static void open(String bridge, boolean internal, List<String> masq4, List<String> masq6) {
        for (String tool : TOOLS) {
            List<String> masq = tool.endsWith("ip6tables") ? masq6 : masq4;
            if (!masq.isEmpty() && Files.isExecutable(Path.of(tool)) && run(tool, "-w", "-t", "nat", "-S", "POSTROUTING") == 0) {
                if (run(tool, "-w", "-t", "nat", "-S", MASQ) != 0) mustRun(tool, "-w", "-t", "nat", "-N", MASQ);
                if (run(tool, "-w", "-t", "nat", "-C", "POSTROUTING", "-j", MASQ) != 0) mustRun(tool, "-w", "-t", "nat", "-A", "POSTROUTING", "-j", MASQ);
                for (List<String> rule : masquerade(bridge, masq)) {
                    if (run(nat(tool, "-C", rule)) != 0) mustRun(nat(tool, "-A", rule).toArray(String[]::new));
                }
            }
        }
        for (String tool : TOOLS) {
            if (!Files.isExecutable(Path.of(tool))) continue;
            if (run(tool, "-w", "-S", "FORWARD") != 0) continue; // no filter table here
            if (run(tool, "-w", "-S", CHAIN) != 0 && run(tool, "-w", "-N", CHAIN) != 0) {
                throw new DriverException("cannot create the iptables chain " + CHAIN);
            }
            if (run(tool, "-w", "-C", "FORWARD", "-j", CHAIN) != 0) mustRun(tool, "-w", "-I", "FORWARD", "-j", CHAIN);
            for (List<String> rule : rules(bridge, internal)) {
                if (run(concat(tool, "-C", rule)) != 0) mustRun(concat(tool, "-A", rule).toArray(String[]::new));
            }
        }
    }

    public static void close(String bridge, boolean internal, List<String> masq4, List<String> masq6) {
        for (String tool : TOOLS) {
            List<String> masq = tool.endsWith("ip6tables") ? masq6 : masq4;
            if (masq.isEmpty() || !Files.isExecutable(Path.of(tool)) || run(tool, "-w", "-t", "nat", "-S", MASQ) != 0) continue;
            for (List<String> rule : masquerade(bridge, masq)) {
                while (run(nat(tool, "-D", rule)) == 0) {
                    // a rule added twice goes twice
                }
            }
        }
        for (String tool : TOOLS) {
            if (!Files.isExecutable(Path.of(tool)) || run(tool, "-w", "-S", CHAIN) != 0) continue;
            for (List<String> rule : rules(bridge, internal)) {
                while (run(concat(tool, "-D", rule)) == 0) {
                    // a rule added twice goes twice
                }
            }
        }
    }

    private static List<String> concat(String tool, String op, List<String> rule) {
        List<String> a = new ArrayList<>(List.of(tool, "-w", op, CHAIN));
        a.addAll(rule);
        return a;
    }

    private static List<String> nat(String tool, String op, List<String> rule) {
        List<String> a = new ArrayList<>(List.of(tool, "-w", "-t", "nat", op, MASQ));
        a.addAll(rule);
        return a;
    }

    private static int run(List<String> cmd) {
        return run(cmd.toArray(String[]::new));
    }

    private static void mustRun(String... cmd) {
        if (run(cmd) != 0) throw new DriverException("failed: " + String.join(" ", cmd));
    }

    private static int run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

}
