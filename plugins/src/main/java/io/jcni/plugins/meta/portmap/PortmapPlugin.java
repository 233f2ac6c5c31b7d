package io.jcni.plugins.meta.portmap;

import io.jcni.linux.Family;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.Sysctl;
import io.jcni.linux.nft.ElementStore;
import io.jcni.linux.nft.ElementStore.Element;
import io.jcni.linux.nft.ElementStore.Owner;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftException;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.spec.Attachment;
import io.jcni.spec.Cidr;
import io.jcni.spec.CniException;
import io.jcni.spec.ErrorCode;
import io.jcni.spec.IpAddr;
import io.jcni.spec.Result;
import java.util.HashSet;
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
        List<Element> elements = PortmapRules.elements(c, ips[0], ips[1]);
        if (elements.isEmpty()) return prev;
        if (c.snat() && ips[0] != null) enableLocalnetRouting(ips[0].address());
        store(c).put(owner(req), PortmapRules.skeleton(), elements);
        return prev;
    }

    @Override
    public void del(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        store(c).remove(owner(req), PortmapRules.skeleton());
    }

    @Override
    public void check(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        if (c.mappings().isEmpty()) return;
        Cidr[] ips = PortmapConfig.containerIps(prev, req.ifname());
        Set<Element> want = new HashSet<>(PortmapRules.elements(c, ips[0], ips[1]));
        ElementStore store = store(c);
        Set<Element> have = new HashSet<>(store.elements(owner(req)));
        if (!have.containsAll(want)) {
            want.removeAll(have);
            throw new CniException(ErrorCode.INTERNAL, "portmap: missing port mappings", "not set up: " + want);
        }
        try {
            store.verifyPresent(owner(req));
        } catch (NftException e) {
            throw new CniException(ErrorCode.INTERNAL, "portmap: port mappings missing from nftables", e.getMessage());
        }
    }

    @Override
    public void gc(PluginRequest req) {
        PortmapConfig c = PortmapConfig.parse(req.conf());
        Set<Attachment> valid = new HashSet<>(req.validAttachments());
        store(c).gc(SCOPE, req.networkName(), o -> valid.contains(new Attachment(o.containerId(), o.ifname())),
                PortmapRules.skeleton());
    }

    static Owner owner(PluginRequest req) {
        return new Owner(SCOPE, req.networkName(), req.containerId(), req.ifname());
    }

    static ElementStore store(PortmapConfig c) {
        try {
            return new ElementStore(Nft.current(), c.dataDir() == null ? ElementStore.DEFAULT_BASE : c.dataDir());
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "portmap: cannot use nftables", e.getMessage());
        }
    }

    /**
     * Sets route_localnet on the host interface that routes to the container, so that connections
     * to 127.0.0.1:hostPort, DNATed to the container, may leave with a 127/8 source (masqueraded
     * on the way out), as the reference plugin does. Failure to find the interface is not an error.
     */
    static void enableLocalnetRouting(IpAddr container) {
        String ifname = null;
        try (Rtnl rtnl = Rtnl.open()) {
            Route best = null;
            for (Route r : rtnl.routes(Family.INET, Route.TABLE_MAIN)) {
                if (r.oif() <= 0 || r.dst() == null) continue;
                Cidr dst = new Cidr(new IpAddr(r.dst().address().getAddress()), r.dst().length());
                if (!dst.contains(container)) continue;
                if (best == null || r.dst().length() > best.dst().length()) best = r;
            }
            if (best != null) ifname = rtnl.link(best.oif()).name();
        }
        if (ifname != null) Sysctl.set("net/ipv4/conf/" + ifname + "/route_localnet", "1");
    }
}
