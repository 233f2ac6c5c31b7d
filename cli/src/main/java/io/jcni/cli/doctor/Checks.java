package io.jcni.cli.doctor;

import io.jcni.cli.doctor.Finding.Severity;
import io.jcni.cli.doctor.NodeFacts.Allocation;
import io.jcni.cli.doctor.NodeFacts.Cached;
import io.jcni.cli.doctor.NodeFacts.Feature;
import io.jcni.cli.doctor.NodeFacts.Network;
import io.jcni.cli.doctor.NodeFacts.NftOwner;
import io.jcni.cli.doctor.NodeFacts.OwnedLink;
import io.jcni.types.CniVersion;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The doctor's rules: facts in, findings out. No I/O. */
public final class Checks {
    private Checks() {}

    /** The kernel features each plugin type needs (vxlan: used by overlay plugins such as flannel). */
    static final Map<String, List<String>> FEATURES_BY_PLUGIN = Map.of(
            "bridge", List.of("bridge", "veth"),
            "ptp", List.of("veth"),
            "macvlan", List.of("macvlan"),
            "ipvlan", List.of("ipvlan"),
            "vlan", List.of("vlan"),
            "dummy", List.of("dummy"),
            "bandwidth", List.of("ifb", "tbf"),
            "portmap", List.of("nf_tables"),
            "firewall", List.of("nf_tables"),
            "flannel", List.of("vxlan"));

    /** The feature list, in report order, with the module that provides each and its kernel option. */
    static final Map<String, String[]> FEATURES = features();

    private static Map<String, String[]> features() {
        Map<String, String[]> m = new LinkedHashMap<>();
        m.put("bridge", new String[] {"bridge", "CONFIG_BRIDGE"});
        m.put("veth", new String[] {"veth", "CONFIG_VETH"});
        m.put("vxlan", new String[] {"vxlan", "CONFIG_VXLAN"});
        m.put("macvlan", new String[] {"macvlan", "CONFIG_MACVLAN"});
        m.put("ipvlan", new String[] {"ipvlan", "CONFIG_IPVLAN"});
        m.put("vlan", new String[] {"8021q", "CONFIG_VLAN_8021Q"});
        m.put("dummy", new String[] {"dummy", "CONFIG_DUMMY"});
        m.put("ifb", new String[] {"ifb", "CONFIG_IFB"});
        m.put("tbf", new String[] {"sch_tbf", "CONFIG_NET_SCH_TBF"});
        m.put("nf_tables", new String[] {"nf_tables", "CONFIG_NF_TABLES"});
        return m;
    }

    public static List<Finding> evaluate(NodeFacts f) {
        List<Finding> out = new ArrayList<>();
        kernel(f, out);
        access(f, out);
        config(f, out);
        plugins(f, out);
        daemon(f, out);
        leftovers(f, out);
        return out;
    }

    /** Which configured networks (and through which plugin) need each feature. */
    static Map<String, Set<String>> featureUsers(List<Network> networks) {
        Map<String, Set<String>> users = new LinkedHashMap<>();
        for (Network n : networks) {
            for (String type : n.plugins().keySet()) {
                for (String feat : FEATURES_BY_PLUGIN.getOrDefault(type, List.of())) {
                    users.computeIfAbsent(feat, k -> new TreeSet<>()).add(n.name() + " (" + type + ")");
                }
            }
            if (n.masquerades()) users.computeIfAbsent("nf_tables", k -> new TreeSet<>()).add(n.name() + " (ipMasq)");
        }
        return users;
    }

    private static void kernel(NodeFacts f, List<Finding> out) {
        Map<String, Set<String>> users = featureUsers(f.networks());
        for (Feature k : f.kernel()) {
            Set<String> who = users.getOrDefault(k.name(), Set.of());
            String[] mod = FEATURES.getOrDefault(k.name(), new String[] {k.name(), "?"});
            String plugins = pluginsNeeding(k.name());
            switch (k.state()) {
                case AVAILABLE -> out.add(Finding.ok("kernel", k.name(), "the kernel supports " + k.name()));
                case MISSING -> {
                    String fix = "load it (modprobe " + mod[0] + ") or use a kernel built with " + mod[1];
                    if (who.isEmpty()) {
                        out.add(new Finding(Severity.INFO, "kernel", k.name(), "the kernel has no " + k.name()
                                + " (" + k.detail() + "); no network here needs it, but " + plugins + " would fail", fix));
                    } else {
                        out.add(new Finding(Severity.FAIL, "kernel", k.name(), "the kernel has no " + k.name() + " ("
                                + k.detail() + "), which " + String.join(", ", who) + " need(s): ADD will fail", fix));
                    }
                }
                case UNKNOWN -> out.add(new Finding(who.isEmpty() ? Severity.INFO : Severity.WARN, "kernel", k.name(),
                        "could not check " + k.name() + ": " + k.detail(), "run jcni doctor as root"));
            }
        }
    }

    private static String pluginsNeeding(String feature) {
        Set<String> p = new TreeSet<>();
        FEATURES_BY_PLUGIN.forEach((type, feats) -> {
            if (feats.contains(feature)) p.add(type);
        });
        if (feature.equals("nf_tables")) p.add("ipMasq");
        return p.isEmpty() ? "plugins that use it" : String.join(", ", p);
    }

    private static void access(NodeFacts f, List<Finding> out) {
        if (f.netlink().ok()) out.add(Finding.ok("netlink", "rtnetlink", "rtnetlink answers: " + f.netlink().detail()));
        else out.add(new Finding(Severity.FAIL, "netlink", "rtnetlink", "cannot use rtnetlink: " + f.netlink().detail()
                + "; no plugin can create or remove interfaces", "run as root (plugins need CAP_NET_ADMIN)"));
        Set<String> nftUsers = featureUsers(f.networks()).getOrDefault("nf_tables", Set.of());
        if (f.nft().ok()) {
            out.add(Finding.ok("nft", "nft", "nft answers: " + f.nft().detail()));
        } else {
            String fix = f.nft().detail().contains("not found") ? "apt-get install nftables" : "run as root (nft needs CAP_NET_ADMIN)";
            out.add(new Finding(nftUsers.isEmpty() ? Severity.INFO : Severity.FAIL, "nft", "nft", "cannot use nft: "
                    + f.nft().detail() + (nftUsers.isEmpty() ? "; portmap, firewall and ipMasq would fail"
                    : "; " + String.join(", ", nftUsers) + " need(s) it"), fix));
        }
    }

    private static void config(NodeFacts f, List<Finding> out) {
        Path dir = f.confDir();
        for (NodeFacts.Unread u : f.unread()) {
            if (!u.path().equals(dir) || !u.what().equals(NodeProbe.CONF_DIR)) continue;
            out.add(new Finding(Severity.FAIL, "config", dir.toString(), "could not read the configuration directory " + dir + " ("
                    + u.reason() + "): networks, plugins and addresses were not checked",
                    u.reason().contains("permission denied") ? "run jcni doctor as root" : "make " + dir + " a readable directory"));
            return;
        }
        if (!f.confDirExists()) {
            out.add(new Finding(Severity.WARN, "config", dir.toString(), "the configuration directory " + dir
                    + " does not exist: a runtime finds no network", "mkdir -p " + dir + " and put a .conflist in it"));
            return;
        }
        for (NodeFacts.BadFile b : f.badFiles()) {
            out.add(new Finding(Severity.FAIL, "config", b.file().toString(), b.file() + " does not load: " + b.reason(),
                    "correct the file, or move it out of " + dir + " (while it is there, libcni and jcni may fail to load"
                            + " other networks by name, jcni gc included)"));
        }
        if (f.networks().isEmpty() && f.badFiles().isEmpty()) {
            out.add(new Finding(Severity.WARN, "config", dir.toString(), dir + " holds no network configuration",
                    "write a .conflist into " + dir));
        }
        for (Network n : f.networks()) {
            out.add(Finding.ok("config", n.file().toString(), "network \"" + n.name() + "\" loads (" + n.cniVersion() + ", "
                    + String.join(", ", n.plugins().keySet()) + ")"));
        }
        firstPicked(f, out);
    }

    /**
     * A Kubernetes node's runtime (containerd's CRI, CRI-O) networks pods with one configuration only:
     * the first file of the conf dir by name (libcni's ConfFiles: .conf, .conflist, .json, sorted). A
     * jcni configuration (a file named *jcni*, as the DaemonSet's 10-jcni.conflist) behind another
     * vendor's file is never used there, whatever loads.
     */
    static void firstPicked(NodeFacts f, List<Finding> out) {
        List<Path> files = new ArrayList<>();
        for (Network n : f.networks()) files.add(n.file());
        for (NodeFacts.BadFile b : f.badFiles()) files.add(b.file());
        if (files.size() < 2) return;
        files.sort(java.util.Comparator.comparing(p -> p.getFileName().toString()));
        Path first = files.getFirst();
        List<String> jcni = new ArrayList<>();
        for (Path p : files) if (p.getFileName().toString().contains("jcni")) jcni.add(p.getFileName().toString());
        if (!jcni.isEmpty() && !jcni.contains(first.getFileName().toString())) {
            out.add(new Finding(Severity.WARN, "config", first.toString(), "a Kubernetes node's runtime (containerd, CRI-O) uses only the"
                    + " first file by name, " + first.getFileName() + ", not jcni's " + String.join(", ", jcni),
                    "remove " + first + ", or give jcni's file a name that sorts first (e.g. 00-jcni.conflist)"));
        } else {
            out.add(new Finding(Severity.INFO, "config", first.toString(), "a Kubernetes node's runtime (containerd, CRI-O) uses only "
                    + first.getFileName() + " (the first file by name); the other " + (files.size() - 1) + " file(s) only by name", ""));
        }
    }

    private static void plugins(NodeFacts f, List<Finding> out) {
        String path = f.cniPath().isEmpty() ? "(empty)" : joined(f.cniPath());
        for (Network n : f.networks()) {
            for (Map.Entry<String, Path> p : n.plugins().entrySet()) {
                if (p.getValue() != null) continue;
                out.add(new Finding(Severity.FAIL, "plugins", p.getKey(), "network \"" + n.name() + "\" uses plugin \""
                        + p.getKey() + "\", which is not in CNI_PATH " + path + ": ADD will fail",
                        f.cniPath().isEmpty() ? "set CNI_PATH to the plugin directory (jcni's package: /opt/cni/bin)"
                                : "install \"" + p.getKey() + "\" into " + f.cniPath().getFirst() + ", or add its directory to CNI_PATH"));
            }
        }
    }

    private static String joined(List<Path> path) {
        List<String> s = new ArrayList<>();
        for (Path p : path) s.add(p.toString());
        return String.join(":", s);
    }

    private static void daemon(NodeFacts f, List<Finding> out) {
        NodeFacts.Daemon d = f.daemon();
        if (d.running()) {
            out.add(Finding.ok("daemon", d.socket().toString(), "jcnid answers on " + d.socket() + " (pid " + d.pid() + ")"));
            // The plugin fast path serves, but a service the node was set up to run (Docker driver, DHCP, overlay) does not.
            for (String down : d.servicesDown()) {
                out.add(new Finding(Severity.FAIL, "daemon", "service " + down.substring(0, down.indexOf(' ')),
                        "jcnid's service " + down, "fix the cause (jcnid's log has it), then restart jcnid; jcnid status lists its services"));
            }
        } else {
            out.add(new Finding(Severity.INFO, "daemon", d.socket().toString(), "jcnid is not running on " + d.socket()
                    + ": plugin calls start a JVM each (correct, but hundreds of ms slower)",
                    "systemctl enable --now jcnid.socket (without systemd: jcni daemon start)"));
        }
    }

    /** Network, container ID and interface: what ties state to an attachment. */
    record Key(String network, String containerId, String ifName) {
        @Override
        public String toString() {
            return network + " " + containerId + "/" + ifName;
        }
    }

    private static void leftovers(NodeFacts f, List<Finding> out) {
        Set<Key> attached = new HashSet<>();
        for (Cached c : f.cached()) attached.add(new Key(c.network(), c.containerId(), c.ifName()));
        Set<String> legacy = new HashSet<>(); // legacy reservations name only the container
        for (Cached c : f.cached()) legacy.add(c.network() + "\0" + c.containerId());
        int before = out.size();
        for (Cached c : f.cached()) {
            if (c.netnsExists()) continue;
            out.add(new Finding(Severity.WARN, "leftovers", c.network() + " " + c.containerId() + "/" + c.ifName(),
                    "the cached attachment of container " + c.containerId() + " (" + c.ifName() + ") to \"" + c.network()
                    + "\" names network namespace " + c.netns() + ", which no longer exists: its addresses and rules are still held",
                    gcCommand(f, c.network()).orElse("no configuration for \"" + c.network() + "\" is left to DEL with; remove "
                            + "the cache entry by hand after cleaning up")));
        }
        for (Allocation a : f.allocations()) {
            boolean owned = a.ifName() == null ? legacy.contains(a.network() + "\0" + a.containerId())
                    : attached.contains(new Key(a.network(), a.containerId(), a.ifName()));
            if (owned) continue;
            out.add(new Finding(Severity.WARN, "leftovers", a.file().toString(), "address " + a.ip() + " in \"" + a.network()
                    + "\" is allocated to container " + a.containerId() + (a.ifName() == null ? "" : " (" + a.ifName() + ")")
                    + ", which has no attachment: the address is leaked",
                    gc11Command(f, a.network()).orElse("rm " + a.file())));
        }
        for (OwnedLink l : f.links()) {
            if (attached.contains(new Key(l.network(), l.containerId(), l.ifName()))) continue;
            out.add(new Finding(Severity.WARN, "leftovers", l.name(), "link " + l.name() + " (" + l.kind() + ") was made by jcni for container "
                    + l.containerId() + " (" + l.ifName() + ") in \"" + l.network() + "\", which has no attachment: the link is leaked",
                    gc11Command(f, l.network()).orElse("ip link del " + l.name())));
        }
        for (NftOwner o : f.nftOwners()) {
            if (attached.contains(new Key(o.network(), o.containerId(), o.ifName()))) continue;
            out.add(new Finding(Severity.WARN, "leftovers", o.scope() + " " + o.network() + " " + o.containerId() + "/" + o.ifName(),
                    "nftables elements of " + o.scope() + " for container " + o.containerId() + " (" + o.ifName() + ") in \""
                    + o.network() + "\" have no attachment (table " + nftTable(o) + ", comment \"" + o.comment() + "\")"
                    + (o.recorded() ? "" : "; jcni has no record of them, so GC cannot remove them"),
                    (o.recorded() ? gc11Command(f, o.network()) : java.util.Optional.<String>empty())
                            .orElse("delete the elements commented \"" + o.comment()
                                    + "\" from table " + nftTable(o) + " (nft -a list table " + nftTable(o) + " shows them)")));
        }
        for (NodeFacts.Unread u : f.unread()) {
            if (u.what().equals(NodeProbe.CONF_DIR)) continue; // reported under config
            if (u.malformed()) {
                out.add(new Finding(Severity.WARN, "leftovers", u.path().toString(), u.path() + " in " + u.what()
                        + " is not state jcni can read (" + u.reason() + "); it was skipped, and no runtime should find it there",
                        "look at it and remove it: rm " + u.path()));
            } else {
                boolean denied = u.reason().contains("permission denied");
                out.add(new Finding(Severity.WARN, "leftovers", u.path().toString(), "could not read " + u.what() + " in "
                        + u.path() + " (" + u.reason() + "): leftovers there were not checked",
                        denied ? "run jcni doctor as root" : "check " + u.path()));
            }
        }
        if (out.size() == before) {
            out.add(Finding.ok("leftovers", "state", f.cached().size() + " cached attachment(s), " + f.allocations().size()
                    + " allocation(s), " + f.links().size() + " jcni link(s), " + f.nftOwners().size()
                    + " nftables owner(s): every one belongs to a live attachment"));
        }
    }

    /** The table an owner's elements are in: bridge macspoofchk filters bridged frames, so its table is bridge-family. */
    static String nftTable(NftOwner o) {
        return "macspoofchk".equals(o.scope()) ? "bridge jcni" : "inet jcni";
    }

    /**
     * {@code jcni gc NET --valid ...} keeping every cached attachment of NET whose namespace still
     * exists: it DELs the others (whatever the version) and, for CNI 1.1.0 configurations, sends GC
     * so plugins drop state no cached attachment owns. Empty when NET is not configured here.
     */
    static java.util.Optional<String> gcCommand(NodeFacts f, String network) {
        Network n = network(f, network);
        if (n == null) return java.util.Optional.empty();
        Set<String> valid = new LinkedHashSet<>();
        for (Cached c : f.cached()) {
            if (c.network().equals(network) && c.netnsExists()) valid.add(c.containerId() + "/" + c.ifName());
        }
        StringBuilder b = new StringBuilder("jcni gc ").append(network);
        for (String v : valid) b.append(" --valid ").append(v);
        if (valid.isEmpty()) b.append(" --valid none"); // jcni gc wants the live set spelled out, even when empty
        return java.util.Optional.of(b.toString());
    }

    /** As {@link #gcCommand}, but only where GC reaches the plugins: a 1.1.0 (or later) configuration. */
    static java.util.Optional<String> gc11Command(NodeFacts f, String network) {
        Network n = network(f, network);
        if (n == null || !supportsGc(n.cniVersion())) return java.util.Optional.empty();
        return gcCommand(f, network);
    }

    static boolean supportsGc(String version) {
        try {
            return CniVersion.parse(version).supportsGcAndStatus();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Network network(NodeFacts f, String name) {
        for (Network n : f.networks()) if (n.name().equals(name)) return n;
        return null;
    }
}
