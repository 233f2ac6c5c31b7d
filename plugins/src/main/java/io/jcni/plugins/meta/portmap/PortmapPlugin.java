package io.jcni.plugins.meta.portmap;

import io.jcni.linux.Conntrack;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.Sysctl;
import io.jcni.linux.nft.NftException;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.plugins.common.nft.ElementStore;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The portmap meta plugin on nftables: maps host ports to the container, in the network namespace
 * the plugin runs in (the host's). See {@link PortmapRules} for the table, {@link ElementStore} for
 * how each attachment's elements are tracked. ADD and DEL are one write-only nft transaction whose
 * size depends only on the attachment's own mappings.
 */
public final class PortmapPlugin implements Plugin {
    public static final String SCOPE = "portmap";

    @Override
    public Result add(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        if (c.mappings().isEmpty()) return prev;
        Cidr[] ips = PortmapConfig.containerIps(prev, req.ifname());
        String[] ifs = hostInterfaces(c, ips);
        List<Element> elements = PortmapRules.elements(c, ips[0], ifs[0], ips[1], ifs[1]);
        if (elements.isEmpty()) return prev;
        // Set route_localnet on the host interface that reaches the container, so that connections to
        // 127.0.0.1:hostPort, DNATed to the container, may leave with a 127/8 source (masqueraded on
        // the way out), as the reference plugin does.
        if (c.snat() && ifs[0] != null) Sysctl.set("net/ipv4/conf/" + ifs[0] + "/route_localnet", "1");
        store(c).put(owner(req), els -> PortmapRules.skeleton(), elements);
        deleteStaleUdpFlows(c.mappings(), ips);
        return prev;
    }

    /**
     * As the reference does after its rules are in place: deletes the conntrack entries of UDP
     * flows to the mapped host ports, in each family the container has an address in. A UDP flow
     * tracked before the mapping existed (a client retrying to a port that was not mapped yet)
     * keeps its old, untranslated path as long as packets keep coming, and the new container never
     * sees them. Acts in the namespace the plugin runs in, like the nft client. A failure leaves
     * the ADD successful (the reference only logs it).
     */
    static int deleteStaleUdpFlows(List<PortmapConfig.PortMapping> mappings, Cidr[] ips) {
        Set<Integer> ports = new java.util.TreeSet<>();
        for (PortmapConfig.PortMapping m : mappings) if ("udp".equalsIgnoreCase(m.protocol())) ports.add(m.hostPort());
        if (ports.isEmpty()) return 0;
        int deleted = 0;
        try (Conntrack ct = Conntrack.open()) {
            for (int i = 0; i < 2; i++) {
                if (ips[i] == null) continue;
                for (int port : ports) deleted += ct.deleteFlowsTo(i == 0 ? Family.INET : Family.INET6, Conntrack.IPPROTO_UDP, port);
            }
        } catch (ErrnoException e) {
            // informative only, as upstream: the mappings are in place
        }
        return deleted;
    }

    /**
     * Removes what the attachment owns, found through its own state: nothing but {@code dataDir} is
     * read, so runtimeConfig or config validation can never stop a DEL (the runtime's later plugins
     * and retries depend on it succeeding).
     */
    @Override
    public void del(PluginRequest req) {
        store(PortmapConfig.dataDir(req.conf())).remove(owner(req), els -> PortmapRules.skeleton());
    }

    @Override
    public void check(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        if (c.mappings().isEmpty()) return;
        Cidr[] ips = PortmapConfig.containerIps(prev, req.ifname());
        String[] ifs = hostInterfaces(c, ips);
        ElementStore store = store(c);
        Set<Element> missing = store.missing(owner(req), PortmapRules.elements(c, ips[0], ifs[0], ips[1], ifs[1]));
        if (!missing.isEmpty()) throw new CniException(ErrorCode.INTERNAL, "portmap: missing port mappings", "not set up: " + missing);
        try {
            store.verifyPresent(owner(req), els -> PortmapRules.skeleton());
        } catch (NftException e) {
            throw new CniException(ErrorCode.INTERNAL, "portmap: port mappings missing from nftables", e);
        }
    }

    @Override
    public void gc(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        store(c).gc(SCOPE, req.networkName(), req.validAttachments(), els -> PortmapRules.skeleton());
    }

    static Owner owner(PluginRequest req) {
        return new Owner(SCOPE, req.networkName(), req.containerId(), req.ifname());
    }

    static ElementStore store(PortmapConfig c) {
        return store(c.dataDir());
    }

    static ElementStore store(Path dataDir) {
        return ElementStore.forPlugin("portmap", dataDir, ElementStore.TABLE);
    }

    /** The host interfaces routing to the container's IPv4 and IPv6 address (null when unknown or not needed). */
    static String[] hostInterfaces(PortmapConfig c, Cidr[] ips) {
        String[] out = new String[2];
        if (!c.snat() || c.masqAll() || (ips[0] == null && ips[1] == null)) {
            if (c.snat() && ips[0] != null) out[0] = hostInterface(ips[0].address()); // still needed for route_localnet
            return out;
        }
        for (int i = 0; i < 2; i++) if (ips[i] != null) out[i] = hostInterface(ips[i].address());
        return out;
    }

    /** The interface of the most specific main-table route to {@code ip}, or null. */
    static String hostInterface(IpAddr ip) {
        try (Rtnl rtnl = Rtnl.open()) {
            Route best = null;
            for (Route r : rtnl.routes(ip.isV6() ? Family.INET6 : Family.INET, Route.TABLE_MAIN)) {
                if (r.oif() <= 0 || r.dst() == null) continue;
                if (!r.dst().contains(ip)) continue;
                if (best == null || r.dst().prefix() > best.dst().prefix()) best = r;
            }
            if (best == null) return null;
            String name = rtnl.link(best.oif()).name();
            return name.indexOf('"') >= 0 || name.indexOf('\\') >= 0 ? null : name;
        }
    }
}
