package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.NetworkCalls;
import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A Docker network as jcni runs it: the CNI network it becomes, decided once at CreateNetwork and
 * kept (kind "networks") so that every Join and Leave uses the same chain.
 *
 * @param id       Docker's network ID
 * @param plugins  the generated chain's plugin types (bridge first); empty when {@code conflist} is used
 * @param conflist an existing network list copied at CreateNetwork (-o jcni.conflist=NAME); null otherwise
 * @param bridge   the Linux bridge of a generated chain
 * @param mtu      0 for the kernel's default
 * @param internal --internal: no masquerade, no gateway on the bridge, no default route
 * @param subnets  IPv4 then IPv6 pools with their gateways (the gateway may be null)
 * @param bandwidth the bandwidth plugin's ingressRate/ingressBurst/egressRate/egressBurst for every
 *                 endpoint (-o jcni.bandwidth.ingressRate=BITS_PER_S ...); empty for none
 * @param ownsBridge whether jcni made {@code bridge} (it did not exist at CreateNetwork) and so deletes
 *                 it with the network; a bridge that was there before is used and left in place
 * @param lentAddresses the gateway addresses jcni put on a bridge it does not own (they were not on it at
 *                 CreateNetwork), removed from it with the network
 * @param cluster  the cluster network this one is a host's part of ({@code -o jcni.cluster=NAME}); null for a network of this host alone
 */
public record DockerNetwork(String id, List<String> plugins, Map<String, Object> conflist, String bridge, int mtu,
        boolean internal, boolean ipv6, List<Subnet> subnets, Map<String, Long> bandwidth, boolean ownsBridge,
        List<Cidr> lentAddresses, String cluster) {

    public DockerNetwork {
        bandwidth = bandwidth == null ? Map.of() : Map.copyOf(bandwidth);
        lentAddresses = lentAddresses == null ? List.of() : List.copyOf(lentAddresses);
    }

    /** As decided at CreateNetwork, once the driver has looked at the host. */
    public DockerNetwork withBridgeOwnership(boolean owns, List<Cidr> lent) {
        return new DockerNetwork(id, plugins, conflist, bridge, mtu, internal, ipv6, subnets, bandwidth, owns, lent, cluster);
    }

    /** With the MTU a cluster network has on this host (the underlay's minus VXLAN's overhead). */
    public DockerNetwork withMtu(int m) {
        return new DockerNetwork(id, plugins, conflist, bridge, m, internal, ipv6, subnets, bandwidth, ownsBridge, lentAddresses, cluster);
    }

    /** The bridge's name when jcni does not choose one: {@code jc-} and 12 characters of the network ID. */
    static String defaultBridge(String networkId) {
        return "jc-" + networkId.substring(0, Math.min(12, networkId.length()));
    }

    /** The gateways as the bridge plugin puts them on the bridge: the gateway address with its pool's prefix. */
    public List<Cidr> gatewayAddresses() {
        List<Cidr> out = new ArrayList<>();
        for (Subnet s : subnets) if (s.gateway() != null) out.add(new Cidr(s.gateway().address(), s.pool().prefix()));
        return out;
    }

    /** A pool and its gateway ("10.0.0.1/24"; null when none). */
    public record Subnet(Cidr pool, Cidr gateway) {}

    public static final String OPT_PLUGINS = "jcni.plugins";
    public static final String OPT_CONFLIST = "jcni.conflist";
    public static final String OPT_CLUSTER = "jcni.cluster";
    static final String OPT_BANDWIDTH = "jcni.bandwidth.";
    static final List<String> BANDWIDTH_KEYS = List.of("ingressRate", "ingressBurst", "egressRate", "egressBurst");
    public static final String OPT_BRIDGE = "com.docker.network.bridge.name";
    public static final String OPT_MTU = "com.docker.network.driver.mtu";
    static final String OPT_GENERIC = "com.docker.network.generic";
    static final String OPT_IPV6 = "com.docker.network.enable_ipv6";
    static final String OPT_INTERNAL = "com.docker.network.internal";
    public static final List<String> DEFAULT_PLUGINS = List.of("bridge", "portmap");
    /** The first plugin makes the interface; the others are chained after it. */
    static final Set<String> CHAINED = Set.of("portmap", "bandwidth", "firewall", "tuning");

    /** The CNI network name: unique per Docker network and short enough for file names and nft comments. */
    public String cniName() {
        return "docker-" + id.substring(0, Math.min(12, id.length()));
    }

    /**
     * Decides the chain from CreateNetwork's options: Docker's own (-o com.docker.network.bridge.name,
     * ...driver.mtu, --internal, --ipv6) and jcni's (-o jcni.plugins=..., -o jcni.conflist=...).
     *
     * @param conflists loads a network list by name from the CNI config directory
     */
    public static DockerNetwork fromCreate(NetworkCalls.CreateNetwork r, java.util.function.Function<String, Map<String, Object>> conflists) {
        Map<String, Object> generic = r.options().get(OPT_GENERIC) instanceof Map<?, ?> m ? Json.asObject(m) : Map.of();
        Map<String, String> opts = stringOptions(generic);
        boolean internal = flag(r.options(), generic, OPT_INTERNAL);
        boolean ipv6 = flag(r.options(), generic, OPT_IPV6) || !r.ipv6().isEmpty();
        List<Subnet> subnets = new ArrayList<>();
        for (NetworkCalls.IpamData d : r.ipv4()) subnets.add(new Subnet(d.pool(), d.gateway()));
        for (NetworkCalls.IpamData d : r.ipv6()) subnets.add(new Subnet(d.pool(), d.gateway()));
        if (subnets.isEmpty()) throw new DriverException("CreateNetwork: no IPv4Data: the network needs a pool from an IPAM driver");

        int mtu = mtu(opts);
        String bridge = opts.getOrDefault(OPT_BRIDGE, defaultBridge(r.networkId()));
        if (!bridge.matches("[A-Za-z0-9_.-]{1,15}")) {
            throw new DriverException("CreateNetwork: " + OPT_BRIDGE + " is not an interface name (1-15 letters, digits, '_', '.', '-'): " + bridge);
        }
        Map<String, Long> bandwidth = bandwidth(opts);
        String cluster = opts.get(OPT_CLUSTER);
        if (cluster != null) checkCluster(r, opts, ipv6, cluster);
        if (opts.containsKey(OPT_CONFLIST)) {
            if (opts.containsKey(OPT_PLUGINS)) throw new DriverException("CreateNetwork: give " + OPT_PLUGINS + " or " + OPT_CONFLIST + ", not both");
            if (!bandwidth.isEmpty()) throw new DriverException("CreateNetwork: " + OPT_BANDWIDTH + "* options are for generated chains; write them into the conflist");
            Map<String, Object> list = conflists.apply(opts.get(OPT_CONFLIST));
            return new DockerNetwork(r.networkId(), List.of(), list, bridge, mtu, internal, ipv6, subnets, Map.of(), false, List.of(), null);
        }
        List<String> plugins = opts.containsKey(OPT_PLUGINS) ? plugins(opts.get(OPT_PLUGINS)) : DEFAULT_PLUGINS;
        if (!bandwidth.isEmpty() && !plugins.contains("bandwidth")) {
            throw new DriverException("CreateNetwork: " + OPT_BANDWIDTH + "* needs bandwidth in " + OPT_PLUGINS + " (e.g. bridge,portmap,bandwidth)");
        }
        return new DockerNetwork(r.networkId(), List.copyOf(plugins), null, bridge, mtu, internal, ipv6, subnets, bandwidth, true, List.of(), cluster);
    }

    /** The generic options that are strings; jcni's own must be strings, and be ones jcni knows. */
    private static Map<String, String> stringOptions(Map<String, Object> generic) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : generic.entrySet()) {
            if (e.getValue() instanceof String s) opts.put(e.getKey(), s);
            else if (e.getKey().startsWith("jcni.")) throw new DriverException("CreateNetwork: option " + e.getKey() + " must be a string");
        }
        for (String k : opts.keySet()) {
            boolean bw = k.startsWith(OPT_BANDWIDTH) && BANDWIDTH_KEYS.contains(k.substring(OPT_BANDWIDTH.length()));
            if (k.startsWith("jcni.") && !k.equals(OPT_PLUGINS) && !k.equals(OPT_CONFLIST) && !k.equals(OPT_CLUSTER) && !bw) {
                throw new DriverException("CreateNetwork: unknown option " + k + " (jcni knows " + OPT_PLUGINS + ", " + OPT_CONFLIST + ", "
                        + OPT_CLUSTER + " and " + OPT_BANDWIDTH + "{" + String.join(",", BANDWIDTH_KEYS) + "})");
            }
        }
        return opts;
    }

    /** {@value #OPT_MTU}, or 0 (the default) when not given. */
    private static int mtu(Map<String, String> opts) {
        if (!opts.containsKey(OPT_MTU)) return 0;
        try {
            int mtu = Integer.parseInt(opts.get(OPT_MTU));
            if (mtu < 68 || mtu > 65535) throw new NumberFormatException();
            return mtu;
        } catch (NumberFormatException e) {
            throw new DriverException("CreateNetwork: " + OPT_MTU + " must be a number in [68, 65535]: " + opts.get(OPT_MTU));
        }
    }

    /** What a network joining cluster network {@code cluster} must be: a generated chain, one subnet per family. */
    private static void checkCluster(NetworkCalls.CreateNetwork r, Map<String, String> opts, boolean ipv6, String cluster) {
        if (!io.jcni.docker.cluster.ClusterKeys.NAME.matcher(cluster).matches()) {
            throw new DriverException("CreateNetwork: " + OPT_CLUSTER + " is 1-64 letters, digits, '_', '.' or '-': " + cluster);
        }
        if (opts.containsKey(OPT_CONFLIST)) throw new DriverException("CreateNetwork: a cluster network's chain is generated; " + OPT_CONFLIST + " cannot join a cluster");
        if (r.ipv4().size() != 1 || r.ipv6().size() > 1) {
            throw new DriverException("CreateNetwork: a cluster network has one IPv4 subnet, and with --ipv6 one IPv6 subnet");
        }
        if (ipv6 && r.ipv6().isEmpty()) throw new DriverException("CreateNetwork: --ipv6 on a cluster network needs an IPv6 pool (--subnet)");
    }

    /** The chain {@value #OPT_PLUGINS} names: bridge first, then distinct plugins of {@link #CHAINED}. */
    private static List<String> plugins(String option) {
        List<String> plugins = new ArrayList<>();
        for (String p : option.split(",")) if (!p.isBlank()) plugins.add(p.strip());
        if (plugins.isEmpty() || !plugins.getFirst().equals("bridge")) {
            throw new DriverException("CreateNetwork: " + OPT_PLUGINS + " must start with bridge: " + option);
        }
        for (String p : plugins.subList(1, plugins.size())) {
            if (!CHAINED.contains(p)) throw new DriverException("CreateNetwork: " + OPT_PLUGINS + ": " + p + " cannot be chained here (use "
                    + String.join(", ", new java.util.TreeSet<>(CHAINED)) + ")");
        }
        if (new java.util.HashSet<>(plugins).size() != plugins.size()) throw new DriverException("CreateNetwork: " + OPT_PLUGINS + " names a plugin twice");
        return plugins;
    }

    /** The jcni.bandwidth.* options: whole numbers, a rate always with its burst (as the plugin requires). */
    private static Map<String, Long> bandwidth(Map<String, String> opts) {
        Map<String, Long> out = new java.util.TreeMap<>();
        for (String k : BANDWIDTH_KEYS) {
            String v = opts.get(OPT_BANDWIDTH + k);
            if (v == null) continue;
            try {
                long n = Long.parseLong(v);
                if (n <= 0) throw new NumberFormatException();
                out.put(k, n);
            } catch (NumberFormatException e) {
                throw new DriverException("CreateNetwork: " + OPT_BANDWIDTH + k + " must be a positive whole number (bits per second, burst in bits): " + v);
            }
        }
        for (String dir : List.of("ingress", "egress")) {
            if (out.containsKey(dir + "Rate") != out.containsKey(dir + "Burst")) {
                throw new DriverException("CreateNetwork: " + OPT_BANDWIDTH + dir + "Rate and " + OPT_BANDWIDTH + dir + "Burst go together");
            }
        }
        return out;
    }

    private static boolean flag(Map<String, Object> top, Map<String, Object> generic, String key) {
        Object v = top.containsKey(key) ? top.get(key) : generic.get(key);
        return Boolean.TRUE.equals(v) || "true".equals(v);
    }

    /** The Linux bridge the chain uses: ours, or a copied conflist's bridge plugin's; null when it has none. */
    public String linuxBridge() {
        if (conflist == null) return bridge;
        for (Object o : Json.asList(conflist.get("plugins"))) {
            Map<String, Object> p = Json.asObject(o);
            if ("bridge".equals(p.get("type"))) return p.get("bridge") instanceof String b ? b : "cni0";
        }
        return null;
    }

    /** The subnets the driver masquerades: a generated, non-internal network's (a conflist keeps its own ipMasq). */
    public List<String> masqueraded() {
        if (internal || conflist != null) return List.of();
        return subnets.stream().map(s -> s.pool().masked().toString()).toList();
    }

    /** The first subnet of the given family; null when there is none. */
    public Subnet subnet(boolean v6) {
        for (Subnet s : subnets) if (s.pool().isV6() == v6) return s;
        return null;
    }

    /** The first gateway of the given family, without its prefix; null when there is none. */
    public Cidr gateway(boolean v6) {
        for (Subnet s : subnets) if (s.pool().isV6() == v6 && s.gateway() != null) return s.gateway();
        return null;
    }

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("plugins", new ArrayList<Object>(plugins));
        if (conflist != null) m.put("conflist", conflist);
        m.put("bridge", bridge);
        m.put("mtu", (long) mtu);
        m.put("internal", internal);
        m.put("ipv6", ipv6);
        List<Object> s = new ArrayList<>();
        for (Subnet n : subnets) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("pool", n.pool().toString());
            if (n.gateway() != null) e.put("gateway", n.gateway().toString());
            s.add(e);
        }
        m.put("subnets", s);
        if (!bandwidth.isEmpty()) m.put("bandwidth", new LinkedHashMap<String, Object>(bandwidth));
        m.put("ownsBridge", ownsBridge);
        if (!lentAddresses.isEmpty()) m.put("lentAddresses", new ArrayList<Object>(lentAddresses.stream().map(Cidr::toString).toList()));
        if (cluster != null) m.put("cluster", cluster);
        return m;
    }

    /**
     * A stored network. Files written before ownership was recorded have no {@code ownsBridge}: then
     * only a bridge of the default name counts as jcni's, since only that name is surely one jcni chose.
     */
    public static DockerNetwork fromJson(StateDoc d) {
        List<Subnet> subnets = new ArrayList<>();
        for (StateDoc e : d.objects("subnets")) subnets.add(new Subnet(e.cidr("pool"), e.optCidr("gateway")));
        if (subnets.isEmpty()) throw d.damaged("subnets", "missing");
        Map<String, Long> bandwidth = new LinkedHashMap<>();
        StateDoc b = d.object("bandwidth");
        for (String k : b.keys()) {
            if (!BANDWIDTH_KEYS.contains(k)) throw b.damaged(k, "not a bandwidth setting");
            bandwidth.put(k, b.integer(k, 1, Long.MAX_VALUE, 0));
        }
        String id = d.string("id");
        Map<String, Object> conflist = d.optObject("conflist");
        List<String> plugins = d.strings("plugins");
        if (conflist == null && (plugins.isEmpty() || !plugins.getFirst().equals("bridge"))) throw d.damaged("plugins", "must start with bridge");
        if (conflist != null && !(conflist.get("plugins") instanceof List<?>)) throw d.damaged("conflist", "has no plugins list");
        String bridge = d.string("bridge");
        if (!bridge.matches("[A-Za-z0-9_.-]{1,15}")) throw d.damaged("bridge", "not an interface name: " + bridge);
        boolean owns = d.bool("ownsBridge", conflist == null && bridge.equals(defaultBridge(id)));
        List<Cidr> lent = new ArrayList<>();
        List<String> l = d.strings("lentAddresses");
        for (int i = 0; i < l.size(); i++) {
            Cidr c = Cidr.tryParse(l.get(i));
            if (c == null) throw d.damaged("lentAddresses[" + i + "]", "not a CIDR: " + l.get(i));
            lent.add(c);
        }
        return new DockerNetwork(id, plugins, conflist, bridge, (int) d.integer("mtu", 0, 65535, 0), d.bool("internal"), d.bool("ipv6"),
                subnets, bandwidth, owns, lent, d.optString("cluster"));
    }
}
