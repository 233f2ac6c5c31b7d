package io.jcni.cli.doctor;

import io.jcni.cli.doctor.NodeFacts.Access;
import io.jcni.cli.doctor.NodeFacts.Allocation;
import io.jcni.cli.doctor.NodeFacts.Cached;
import io.jcni.cli.doctor.NodeFacts.Feature;
import io.jcni.cli.doctor.NodeFacts.Network;
import io.jcni.cli.doctor.NodeFacts.NftOwner;
import io.jcni.cli.doctor.NodeFacts.OwnedLink;
import io.jcni.cli.doctor.NodeFacts.State;
import io.jcni.cli.doctor.NodeFacts.Unread;
import io.jcni.daemon.DaemonConfig;
import io.jcni.daemon.DaemonControl;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.MacvlanMode;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.linux.TbfParams;
import io.jcni.plugins.common.nft.ElementStore;
import io.jcni.plugins.ipam.hostlocal.Reservations;
import io.jcni.linux.nft.Nft;
import io.jcni.runtime.CacheEntry;
import io.jcni.runtime.ConfigLoader;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.ResultCache;
import io.jcni.types.CniException;
import io.jcni.types.PluginConf;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Looks at the node, reading only, except for the kernel probe, which creates links, a qdisc and
 * an nftables table inside a scratch network namespace of its own and deletes the namespace
 * (and everything in it) afterwards. The root namespace is never changed.
 */
public final class NodeProbe {
    /** Where host-local keeps allocations when the config names no dataDir (the reference's default). */
    static final Path HOST_LOCAL_DEFAULT = Path.of("/var/lib/cni/networks");
    private static final int EOPNOTSUPP = 95;
    /** How an unreadable conf dir is named in {@link Unread#what()}; {@link Checks} reports it under "config". */
    static final String CONF_DIR = "the configuration directory";

    /** What to look at. */
    public record Options(Path confDir, List<Path> cniPath, Path cacheDir, Path socket, Path nftStateBase, boolean kernel) {}

    private NodeProbe() {}

    public static NodeFacts probe(Options o) {
        ConfigLoader.Listing listing = null;
        boolean confExists = Files.isDirectory(o.confDir());
        List<NodeFacts.BadFile> bad = new ArrayList<>();
        List<Network> networks = new ArrayList<>();
        List<Allocation> allocations = new ArrayList<>();
        List<Unread> unread = new ArrayList<>();
        if (confExists) {
            try {
                listing = ConfigLoader.list(o.confDir());
            } catch (CniException e) {
                // A directory this user may not list (a root-only conf dir): said, not thrown.
                String reason = e.getCause() instanceof java.nio.file.AccessDeniedException ? "permission denied" : e.details();
                unread.add(new Unread(o.confDir(), CONF_DIR, reason.isEmpty() ? e.msg() : reason, false));
                listing = new ConfigLoader.Listing(o.confDir(), List.of(), List.of());
            }
            for (ConfigLoader.Skipped s : listing.skipped()) bad.add(new NodeFacts.BadFile(s.file(), s.reason()));
            for (ConfigLoader.Network n : listing.networks()) {
                networks.add(network(n, o.cniPath()));
                allocations.addAll(allocations(n, unread));
            }
        } else if (Files.exists(o.confDir())) {
            unread.add(new Unread(o.confDir(), CONF_DIR, "not a directory", false));
        }
        List<Cached> cached = cached(o.cacheDir(), unread);
        return new NodeFacts(o.kernel() ? kernel() : List.of(), netlink(), nft(), o.confDir(), confExists, networks, bad,
                o.cniPath(), daemon(o.socket()), cached, allocations, links(), nftOwners(o.nftStateBase(), unread), unread);
    }

    private static Network network(ConfigLoader.Network n, List<Path> cniPath) {
        Map<String, Path> plugins = new LinkedHashMap<>();
        boolean masq = false;
        for (PluginConf p : n.config().plugins()) {
            plugins.put(p.type(), find(p.type(), cniPath));
            Object ipamType = p.ipam() == null ? null : p.ipam().get("type");
            if (ipamType instanceof String t && !t.isEmpty()) plugins.put(t, find(t, cniPath));
            if (Boolean.TRUE.equals(p.raw().get("ipMasq"))) masq = true;
        }
        String v = n.config().cniVersion().isEmpty() ? "0.1.0" : n.config().cniVersion();
        return new Network(n.name(), n.file(), v, plugins, masq);
    }

    private static Path find(String type, List<Path> cniPath) {
        try {
            return PluginExec.findInPath(type, cniPath);
        } catch (CniException e) {
            return null;
        }
    }

    /**
     * host-local's reservations for this network, read by host-local's own reader; files it does not
     * accept as reservations, and a directory it cannot list, go to {@code unread} with the reason.
     */
    static List<Allocation> allocations(ConfigLoader.Network n, List<Unread> unread) {
        List<Allocation> out = new ArrayList<>();
        for (PluginConf p : n.config().plugins()) {
            Map<String, Object> ipam = p.ipam();
            if (ipam == null || !"host-local".equals(ipam.get("type"))) continue;
            Path dir = (ipam.get("dataDir") instanceof String d && !d.isEmpty() ? Path.of(d) : HOST_LOCAL_DEFAULT).resolve(n.name());
            String what = "host-local's addresses of \"" + n.name() + "\"";
            Reservations.Scan scan = Reservations.scan(dir);
            if (scan.unreadable() != null) unread.add(new Unread(dir, what, scan.unreadable(), false));
            for (Reservations.Malformed m : scan.malformed()) unread.add(new Unread(m.file(), what, m.reason(), true));
            for (Reservations.Reservation r : scan.reservations()) {
                out.add(new Allocation(n.name(), r.file(), r.ip().toString(), r.containerId(), r.ifname()));
            }
        }
        return out;
    }

    /** Creates each kind of link, a tbf qdisc and an nftables table in a scratch namespace, then deletes the namespace. */
    static List<Feature> kernel() {
        List<Feature> out = new ArrayList<>();
        String name = "jcni-doctor-" + ProcessHandle.current().pid() + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20));
        Netns ns;
        try {
            ns = Netns.create(name);
        } catch (RuntimeException e) {
            for (String f : Checks.FEATURES.keySet()) out.add(new Feature(f, State.UNKNOWN, "no scratch network namespace: " + e.getMessage()));
            return out;
        }
        try (ns; Rtnl rt = Rtnl.open(ns)) {
            out.add(link(rt, "veth", NewLink.veth("dveth0", "dveth1")));
            int parent = rt.findLink("dveth0").map(Link::index).orElse(0);
            out.add(link(rt, "bridge", NewLink.bridge("dbr0")));
            out.add(link(rt, "vxlan", NewLink.vxlan("dvx0", 4242)));
            out.add(parent == 0 ? new Feature("macvlan", State.UNKNOWN, "no veth to attach to")
                    : link(rt, "macvlan", NewLink.macvlan("dmv0", parent, MacvlanMode.BRIDGE)));
            // No parent given: a kernel that knows the kind refuses the request for that (EINVAL);
            // one that does not know it says EOPNOTSUPP first.
            out.add(link(rt, "ipvlan", NewLink.ofKind("dipv0", "ipvlan")));
            out.add(link(rt, "vlan", NewLink.ofKind("dvl0", "vlan")));
            out.add(link(rt, "dummy", NewLink.dummy("ddm0")));
            out.add(link(rt, "ifb", NewLink.ifb("difb0")));
            out.add(tbf(rt, parent));
            out.add(nfTables(ns));
        } catch (RuntimeException e) {
            for (String f : Checks.FEATURES.keySet()) {
                if (out.stream().noneMatch(x -> x.name().equals(f))) out.add(new Feature(f, State.UNKNOWN, e.getMessage()));
            }
        } finally {
            try {
                Netns.delete(name);
            } catch (RuntimeException e) {
                // reported by the next ip netns list; nothing else to do here
            }
        }
        return out;
    }

    private static Feature link(Rtnl rt, String feature, NewLink spec) {
        try {
            rt.addLink(spec);
            return new Feature(feature, State.AVAILABLE, "created a " + spec.kind() + " link");
        } catch (ErrnoException e) {
            if (e.errno() == EOPNOTSUPP) return new Feature(feature, State.MISSING, "the kernel does not know link kind \"" + spec.kind() + "\"");
            if (spec.kind().equals("ipvlan") || spec.kind().equals("vlan")) {
                return new Feature(feature, State.AVAILABLE, "the kernel knows link kind \"" + spec.kind() + "\"");
            }
            return new Feature(feature, State.MISSING, e.getMessage());
        }
    }

    private static Feature tbf(Rtnl rt, int index) {
        if (index == 0) return new Feature("tbf", State.UNKNOWN, "no veth to put a qdisc on");
        try {
            rt.tc().addTbf(index, TbfParams.forBandwidth(1_000_000, 100_000));
            return new Feature("tbf", State.AVAILABLE, "added a tbf qdisc");
        } catch (ErrnoException e) {
            return new Feature("tbf", State.MISSING, e.getMessage());
        }
    }

    private static Feature nfTables(Netns ns) {
        try {
            Nft.in(ns).run("add table inet jcni_doctor\n");
            return new Feature("nf_tables", State.AVAILABLE, "created an nftables table");
        } catch (RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            State s = m.contains("No such file") || m.contains("Cannot run program") ? State.UNKNOWN : State.MISSING;
            return new Feature("nf_tables", s, s == State.UNKNOWN ? "nft is not installed" : m);
        }
    }

    private static Access netlink() {
        try (Rtnl rt = Rtnl.open()) {
            return new Access(true, rt.links().size() + " links in this network namespace");
        } catch (RuntimeException e) {
            return new Access(false, String.valueOf(e.getMessage()));
        }
    }

    /** {@code nft list tables}: read-only, and it needs the same privilege as every change. */
    private static Access nft() {
        try {
            Process p = new ProcessBuilder(nftExecutable(), "list", "tables").redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out;
            try (InputStream in = p.getInputStream()) {
                out = in.readNBytes(1 << 16);
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Access(false, "nft list tables did not answer within 10 s");
            }
            String text = new String(out, StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0) return new Access(false, "nft list tables: " + text);
            return new Access(true, text.isEmpty() ? "no tables" : text.lines().count() + " table(s)");
        } catch (IOException e) {
            return new Access(false, "nft not found (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Access(false, "interrupted");
        }
    }

    private static String nftExecutable() {
        for (String c : List.of("/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft")) if (Files.isExecutable(Path.of(c))) return c;
        return "nft";
    }

    private static NodeFacts.Daemon daemon(Path socket) {
        DaemonControl.Status s = DaemonControl.status(DaemonConfig.parse(List.of("--socket", socket.toString())));
        return new NodeFacts.Daemon(socket, s.running(), s.pid(), s.servicesDown());
    }

    private static List<Cached> cached(Path cacheDir, List<Unread> unread) {
        List<Cached> out = new ArrayList<>();
        ResultCache cache = new ResultCache(cacheDir);
        ResultCache.Scan scan = cache.scan(null);
        if (scan.unreadable() != null) unread.add(new Unread(cache.resultsDir(), "the result cache", scan.unreadable(), false));
        for (Map.Entry<Path, String> r : scan.refused()) unread.add(new Unread(r.getKey(), "the result cache", r.getValue(), true));
        for (CacheEntry e : scan.entries()) {
            boolean exists = e.netns().isEmpty() || Files.exists(Path.of(e.netns()));
            out.add(new Cached(e.networkName(), e.containerId(), e.ifName(), e.netns(), exists));
        }
        return out;
    }

    /** Links in this namespace whose alias names the attachment jcni made them for. */
    private static List<OwnedLink> links() {
        List<OwnedLink> out = new ArrayList<>();
        try (Rtnl rt = Rtnl.open()) {
            for (Link l : rt.links()) {
                OwnedLink o = ownedLink(l.name(), l.kind(), l.alias());
                if (o != null) out.add(o);
            }
        } catch (RuntimeException e) {
            // reported by the netlink check
        }
        return out;
    }

    /** Parses a jcni alias: {@code jcni/NET/CID/IF} (bridge, ptp veths) or {@code jcni-bandwidth/NET/CID/IF} (ifbs). */
    static OwnedLink ownedLink(String name, String kind, String alias) {
        if (alias == null || !(alias.startsWith("jcni/") || alias.startsWith("jcni-bandwidth/"))) return null;
        String[] p = alias.split("/", -1);
        if (p.length != 4 || p[1].isEmpty() || p[2].isEmpty() || p[3].isEmpty()) return null;
        return new OwnedLink(name, kind == null ? "" : kind, p[1], p[2], p[3]);
    }

    /** Owners from jcni's records, then those only an element's comment in {@code inet jcni} names. */
    private static List<NftOwner> nftOwners(Path base, List<Unread> unread) {
        List<NftOwner> out = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        try {
            for (ElementStore.Owner o : new ElementStore(Nft.current(), base).owners()) {
                out.add(new NftOwner(o.scope(), o.network(), o.containerId(), o.ifname(), o.comment(), true));
                seen.add(o.comment());
            }
        } catch (RuntimeException e) {
            // No state directory: nothing recorded. One that exists but cannot be read hides owners.
            if (Files.isDirectory(base) && !Files.isReadable(base)) {
                unread.add(new Unread(base, "jcni's nftables ownership records", "permission denied", false));
            }
        }
        for (NftOwner o : commentOwners(listJcniTable())) {
            if (seen.add(o.comment())) out.add(o);
        }
        return out;
    }

    /** {@code nft list table inet jcni}, or "" when there is no such table (or no nft). Read-only. */
    private static String listJcniTable() {
        try {
            Process p = new ProcessBuilder(nftExecutable(), "list", "table", "inet", "jcni").redirectError(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            String text;
            try (InputStream in = p.getInputStream()) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "";
            }
            return p.exitValue() == 0 ? text : "";
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    private static final java.util.regex.Pattern COMMENT = java.util.regex.Pattern.compile("comment \"([^\"]*)\"");

    /** Owners named by element comments ({@code SCOPE NETWORK CID IFNAME}, see ElementStore.Owner#comment). */
    static List<NftOwner> commentOwners(String ruleset) {
        List<NftOwner> out = new ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        java.util.regex.Matcher m = COMMENT.matcher(ruleset);
        while (m.find()) {
            String c = m.group(1);
            String[] p = c.split(" ", -1);
            if (p.length != 4 || java.util.Arrays.stream(p).anyMatch(String::isEmpty) || !seen.add(c)) continue;
            out.add(new NftOwner(p[0], p[1], p[2], p[3], c, false));
        }
        return out;
    }
}
