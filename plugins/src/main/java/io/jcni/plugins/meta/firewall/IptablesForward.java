package io.jcni.plugins.meta.firewall;

import io.jcni.linux.Flock;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftBatch.Family;
import io.jcni.linux.nft.NftException;
import io.jcni.linux.nft.NfTables;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * The firewall's rules in iptables' own {@code filter} table ({@link IptablesRules}), for hosts
 * where iptables filters forwarded traffic too (Docker's {@code FORWARD} policy DROP): an accept
 * in jcni's nft table cannot stop another table's drop at the same hook, a rule in iptables'
 * FORWARD chain can. Written by the {@code iptables}/{@code ip6tables} programs, never by
 * netlink, so that iptables (nft or legacy) reads its tables back as it wrote them.
 *
 * <p>Nothing runs unless the family's filter table with a FORWARD chain is there ({@link #on}):
 * one netlink request on the socket the plugin already uses (iptables-nft's {@code ip filter}),
 * and, only when that finds nothing, one read of {@code /proc/thread-self/net/ip_tables_names}
 * (legacy iptables). jcni's own changes to these chains are serialised by a lock file ({@link #lock}).
 */
final class IptablesForward {
    private static final List<String> DIRS = List.of("/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/");
    /** The missing program is said once per process (jcnid serves many calls). */
    private static volatile boolean warnedMissing;

    private final Nft nft;
    private final String program;

    private IptablesForward(Nft nft, String program) {
        this.nft = nft;
        this.program = program;
    }

    /**
     * The family's iptables, when its filter table has a FORWARD chain in {@code nft}'s namespace
     * and the program is installed; else null (nothing to do; a missing program is warned about
     * on {@code log} once).
     */
    static IptablesForward on(Nft nft, boolean v6, PrintStream log) {
        if (!filterForwardExists(nft, v6)) return null;
        String name = v6 ? "ip6tables" : "iptables";
        for (String d : DIRS) {
            if (Files.isExecutable(Path.of(d + name))) return new IptablesForward(nft, d + name);
        }
        if (!warnedMissing) {
            warnedMissing = true;
            log.println("firewall: iptables' filter table has a FORWARD chain here, but " + name
                    + " is not installed: forwarded traffic may still be dropped there (install iptables)");
        }
        return null;
    }

    private static boolean filterForwardExists(Nft nft, boolean v6) {
        try (NfTables t = nft.tables()) {
            if (t.hasChain(v6 ? Family.IPV6 : Family.IPV4, "filter", IptablesRules.FORWARD)) return true;
        } catch (NftException e) {
            // no nf_tables here (a legacy-only kernel): legacy iptables may still be
        }
        Path names = Path.of("/proc/thread-self/net/" + (v6 ? "ip6_tables_names" : "ip_tables_names"));
        try {
            for (String line : Files.readString(names).split("\n")) if (line.strip().equals("filter")) return true;
        } catch (IOException e) {
            // no legacy iptables module loaded: no legacy table
        }
        return false;
    }

    /**
     * The lock serialising jcni's iptables changes (two first ADDs must not both create the chains
     * or insert the FORWARD jump), in the firewall's state base {@code base} (one lock for every
     * namespace: these are a few short runs, and the per-namespace directories are swept as a whole).
     */
    static Flock lock(Path base) {
        try {
            Files.createDirectories(base);
        } catch (IOException e) {
            throw new CniException(ErrorCode.INTERNAL, "firewall: cannot create " + base, e);
        }
        return Flock.lock(base.resolve("iptables.lock"));
    }

    /** The chains, the two jumps and the rules of {@code hosts}; nothing is added twice. */
    void add(String adminChain, List<String> hosts) {
        if (hosts.isEmpty()) return;
        Nft.Run listed = run(IptablesRules.list(IptablesRules.CHAIN));
        List<List<String>> present = List.of();
        if (listed.exitCode() != 0) {
            Nft.Run made = run(IptablesRules.newChain(IptablesRules.CHAIN));
            if (made.exitCode() != 0 && run(IptablesRules.list(IptablesRules.CHAIN)).exitCode() != 0) fail(made);
        } else {
            present = IptablesRules.rules(listed.stdout(), IptablesRules.CHAIN);
        }
        List<String> adminJump = IptablesRules.adminJump(adminChain);
        if (!present.contains(adminJump)) {
            // A rule cannot jump to a chain that does not exist: the jump being there proves the chain.
            Nft.Run made = run(IptablesRules.newChain(adminChain));
            if (made.exitCode() != 0 && run(IptablesRules.list(adminChain)).exitCode() != 0) fail(made);
            must(IptablesRules.insertFirst(IptablesRules.CHAIN, adminJump));
        }
        List<String> jump = IptablesRules.forwardJump();
        if (run(IptablesRules.exists(IptablesRules.FORWARD, jump)).exitCode() != 0) must(IptablesRules.insertFirst(IptablesRules.FORWARD, jump));
        for (String h : hosts) {
            for (List<String> rule : IptablesRules.addressRules(h)) {
                if (!present.contains(rule)) must(IptablesRules.append(IptablesRules.CHAIN, rule));
            }
        }
    }

    /** Removes the rules of {@code hosts}; rules or chains already gone are no error, the chains stay. */
    void delete(List<String> hosts) {
        for (String h : hosts) {
            for (List<String> rule : IptablesRules.addressRules(h)) run(IptablesRules.delete(IptablesRules.CHAIN, rule));
        }
    }

    /** Throws naming the first of the FORWARD jump, the admin jump and the rules of {@code hosts} that is missing. */
    void check(String adminChain, List<String> hosts) {
        if (hosts.isEmpty()) return;
        List<String> jump = IptablesRules.forwardJump();
        if (run(IptablesRules.exists(IptablesRules.FORWARD, jump)).exitCode() != 0) missing(IptablesRules.FORWARD, jump);
        Nft.Run listed = run(IptablesRules.list(IptablesRules.CHAIN));
        if (listed.exitCode() != 0) missing(IptablesRules.CHAIN, List.of("(the chain)"));
        List<List<String>> present = IptablesRules.rules(listed.stdout(), IptablesRules.CHAIN);
        List<String> adminJump = IptablesRules.adminJump(adminChain);
        if (!present.contains(adminJump)) missing(IptablesRules.CHAIN, adminJump);
        for (String h : hosts) {
            for (List<String> rule : IptablesRules.addressRules(h)) if (!present.contains(rule)) missing(IptablesRules.CHAIN, rule);
        }
    }

    /** Removes the address rules in CNI-FORWARD of every address not in {@code owned}; returns those addresses. */
    List<String> gc(Set<String> owned) {
        Nft.Run listed = run(IptablesRules.list(IptablesRules.CHAIN));
        if (listed.exitCode() != 0) return List.of();
        List<String> removed = new java.util.ArrayList<>();
        for (List<String> rule : IptablesRules.rules(listed.stdout(), IptablesRules.CHAIN)) {
            String h = IptablesRules.addressOf(rule);
            if (h == null || owned.contains(h)) continue;
            run(IptablesRules.delete(IptablesRules.CHAIN, rule));
            if (!removed.contains(h)) removed.add(h);
        }
        return removed;
    }

    private Nft.Run run(List<String> args) {
        try {
            return nft.runTool(program, args);
        } catch (NftException e) {
            throw new CniException(ErrorCode.INTERNAL, "firewall: " + e.getMessage(), e);
        }
    }

    private void must(List<String> args) {
        Nft.Run r = run(args);
        if (r.exitCode() != 0) fail(r, args);
    }

    private void fail(Nft.Run r) {
        throw new CniException(ErrorCode.INTERNAL, "firewall: " + program + " failed (exit " + r.exitCode() + ")", r.stderr().strip());
    }

    private void fail(Nft.Run r, Collection<String> args) {
        throw new CniException(ErrorCode.INTERNAL, "firewall: " + program + " " + String.join(" ", args) + " failed (exit " + r.exitCode() + ")",
                r.stderr().strip());
    }

    private void missing(String chain, List<String> rule) {
        throw new CniException(ErrorCode.INTERNAL, "firewall: expected " + chain + " rule " + String.join(" ", rule) + " not found in " + program + "'s filter table");
    }
}
