package io.jcni.plugins.meta.firewall;

import io.jcni.linux.Flock;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftException;
import io.jcni.linux.nft.NftSyntax;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.plugins.common.nft.ElementStore;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Names;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The firewall meta plugin on nftables, whatever {@code backend} says (see README.md next to this
 * class): container addresses go into sets of the shared {@code inet jcni} table, looked up by a
 * constant number of rules in {@code fw_forward}. Where iptables' filter table has a FORWARD chain
 * (Docker hosts), the reference's rules go there too ({@link IptablesForward}): that table's drop
 * would otherwise win over jcni's accept.
 */
public final class FirewallPlugin implements Plugin {
    public static final String SCOPE = "firewall";

    @Override
    public Result add(PluginRequest req) {
        FirewallConfig c = FirewallConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        String bridge = null;
        if (c.sameBridge()) {
            if (prev.interfaces().isEmpty() || prev.interfaces().get(0).name() == null || prev.interfaces().get(0).name().isEmpty()) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG,
                        "interface needs to be set for ingress policy \"same-bridge\", make sure to chain \"firewall\" plugin with \"bridge\"");
            }
            bridge = prev.interfaces().get(0).name();
            Names.checkConfigInterfaceName("bridge name in prevResult", bridge);
            try {
                NftSyntax.ifname(bridge);
            } catch (IllegalArgumentException e) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid bridge name in prevResult", e);
            }
        }
        List<Element> elements = FirewallRules.elements(prev);
        String bridgeName = bridge;
        ElementStore store = store(c);
        // A structure in force was applied by nft, admin chain name included: no need to ask nft again.
        if (!store.inForce(FirewallRules.skeleton(c.adminChain(), null))) checkAdminChain(store.nft(), c.adminChain());
        store.put(owner(req), els -> FirewallRules.skeleton(c.adminChain(), bridgeName), elements);
        for (boolean v6 : FAMILIES) {
            List<String> hosts = IptablesRules.hosts(prev, v6);
            if (hosts.isEmpty()) continue;
            IptablesForward ipt = IptablesForward.on(store.nft(), v6, req.log());
            if (ipt == null) continue;
            try (Flock lock = IptablesForward.lock(base(store))) {
                ipt.add(c.adminChain(), hosts);
            }
        }
        return prev;
    }

    /** IPv4, then IPv6: iptables, then ip6tables. */
    private static final boolean[] FAMILIES = {false, true};

    /**
     * nft cannot quote a chain name, so one that is an nft keyword ({@code drop}, {@code ip}...)
     * would break every script it is in: refuse it as a config error before anything is written.
     * Only names that may be keywords (no capital letter; not the default CNI-ADMIN) cost nft's check.
     */
    private static void checkAdminChain(Nft nft, String chain) {
        if (!NftSyntax.mayBeKeyword(chain)) return;
        try {
            nft.check(NftSyntax.chainNameProbe(chain));
        } catch (NftException e) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid iptablesAdminChainName \"" + chain + "\"",
                    "nft cannot take it as a chain name (an nft keyword?): " + e.getMessage(), e);
        }
    }

    @Override
    public void del(PluginRequest req) {
        FirewallConfig c = FirewallConfig.parse(req.conf());
        ElementStore store = store(c);
        List<Element> released = store.remove(owner(req), els -> FirewallRules.removalSkeleton());
        // The addresses the attachment held, and prevResult's (rules an ADD wrote before its records, as upstream's DEL).
        List<String> addresses = new ArrayList<>();
        for (Element e : released) addresses.add(e.key());
        Result prev = req.prevResult();
        if (prev != null) for (Result.IpConfig ip : prev.ips()) addresses.add(ip.address().address().toString());
        for (boolean v6 : FAMILIES) {
            List<String> hosts = IptablesRules.hosts(addresses, v6);
            if (hosts.isEmpty()) continue;
            IptablesForward ipt = IptablesForward.on(store.nft(), v6, req.log());
            if (ipt == null) continue;
            try (Flock lock = IptablesForward.lock(base(store))) {
                ipt.delete(hosts);
            }
        }
    }

    @Override
    public void check(PluginRequest req) {
        FirewallConfig c = FirewallConfig.parse(req.conf());
        Result prev = req.requirePrevResult();
        ElementStore store = store(c);
        Set<Element> missing = store.missing(owner(req), FirewallRules.elements(prev));
        if (!missing.isEmpty()) throw new CniException(ErrorCode.INTERNAL, "firewall: container addresses not allowed", "missing: " + missing);
        try {
            store.verifyPresent(owner(req), els -> FirewallRules.skeleton(c.adminChain(), null));
        } catch (NftException e) {
            throw new CniException(ErrorCode.INTERNAL, "firewall: elements missing from nftables", e);
        }
        for (boolean v6 : FAMILIES) {
            List<String> hosts = IptablesRules.hosts(prev, v6);
            if (hosts.isEmpty()) continue;
            IptablesForward ipt = IptablesForward.on(store.nft(), v6, req.log());
            if (ipt != null) ipt.check(c.adminChain(), hosts);
        }
    }

    @Override
    public void gc(PluginRequest req) {
        FirewallConfig c = FirewallConfig.parse(req.conf());
        ElementStore store = store(c);
        store.gc(SCOPE, req.networkName(), req.validAttachments(), els -> FirewallRules.removalSkeleton());
        // CNI-FORWARD is shared by every network: an address rule stays while any firewall attachment
        // (of this network and valid, or of another network) holds the address.
        List<String> addresses = new ArrayList<>();
        for (Owner o : store.owners()) {
            if (!o.scope().equals(SCOPE)) continue;
            for (Element e : store.elements(o)) addresses.add(e.key());
        }
        for (boolean v6 : FAMILIES) {
            IptablesForward ipt = IptablesForward.on(store.nft(), v6, req.log());
            if (ipt == null) continue;
            try (Flock lock = IptablesForward.lock(base(store))) {
                ipt.gc(new HashSet<>(IptablesRules.hosts(addresses, v6)));
            }
        }
    }

    /** The base directory of the firewall's state (the store's directory is its namespace's, under it). */
    private static Path base(ElementStore store) {
        return store.dir().getParent();
    }

    static Owner owner(PluginRequest req) {
        return new Owner(SCOPE, req.networkName(), req.containerId(), req.ifname());
    }

    static ElementStore store(FirewallConfig c) {
        return ElementStore.forPlugin("firewall", c.dataDir(), ElementStore.TABLE);
    }
}
