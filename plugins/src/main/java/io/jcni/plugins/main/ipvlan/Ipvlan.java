package io.jcni.plugins.main.ipvlan;

import io.jcni.linux.IpvlanMode;
import io.jcni.linux.Link;
import io.jcni.linux.LinkInfo;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.common.Undo;
import io.jcni.plugins.common.ipam.Ipam;
import io.jcni.plugins.common.link.Links;
import io.jcni.plugins.common.link.MasterLinks;
import io.jcni.plugins.common.link.StackedIface;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Result;
import java.util.Map;

/**
 * The {@code ipvlan} plugin: the container gets an ipvlan of the {@code master} (by default the
 * interface of the default route; chained after another plugin, the single interface of its
 * result), sharing the master's MAC, in {@code mode} l2 (the default), l3 or l3s.
 *
 * <p>ADD creates the ipvlan under a temporary name directly in the container, renames it
 * CNI_IFNAME, then configures the addresses of the IPAM plugin, or, chained without {@code ipam},
 * those of prevResult. A kernel without the ipvlan driver answers EOPNOTSUPP: ADD fails with
 * code 50 "the kernel has no ipvlan support" before any address is allocated, leaving nothing
 * behind; any later failure removes the interface and releases the addresses (upstream leaves the
 * interface). DEL releases the addresses and deletes CNI_IFNAME, idempotently, without needing the
 * master. CHECK verifies the master, the interface's kind, mode and MAC, addresses and routes.
 * GC and STATUS are the IPAM plugin's: there is no host state.
 */
public final class Ipvlan implements Plugin {

    record Conf(String master, IpvlanMode mode, int mtu, boolean linkInContainer, String ipamType, Result.Dns dns) {
        static Conf load(Map<String, Object> c) {
            String master = Fields.string(c, "master", "");
            String modeText = Fields.string(c, "mode", "");
            IpvlanMode mode;
            try {
                mode = IpvlanMode.parse(modeText == null ? "" : modeText);
            } catch (IllegalArgumentException e) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "unknown ipvlan mode: \"" + modeText + "\"");
            }
            Result.Dns dns = NetConfs.dns(c);
            return new Conf(master == null ? "" : master, mode, NetConfs.mtu(c), Fields.bool(c, "linkInContainer", "", false),
                    NetConfs.ipamType(c), dns == null ? Result.Dns.EMPTY : dns);
        }
    }

    /** The master's name: configured, else prevResult's single interface when chained, else the default route's. */
    static String masterName(Conf conf, Result prev, Rtnl side) {
        if (!conf.master().isEmpty()) return conf.master();
        if (prev == null) return MasterLinks.defaultRouteInterface(side);
        if (prev.interfaces().size() == 1 && prev.interfaces().getFirst().name() != null && !prev.interfaces().getFirst().name().isEmpty()) {
            return prev.interfaces().getFirst().name();
        }
        throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "chained master failure. PrevResult lacks a single named interface");
    }

    @Override
    public Result add(PluginRequest req) throws Exception {
        Conf conf = Conf.load(req.conf());
        Result prev = req.prevResult();
        boolean fromPrev = conf.ipamType() == null && prev != null && !prev.ips().isEmpty();
        if (conf.ipamType() == null && !fromPrev) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing 'ipam.type'",
                    "ipvlan needs an IPAM plugin, or a prevResult with addresses when chained");
        }
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open();
             Undo undo = new Undo(req.log())) {
            Rtnl side = MasterLinks.masterSide(host, crt, conf.linkInContainer());
            Link master = MasterLinks.master(side, masterName(conf, prev, side));
            Result.Interface iface = MasterLinks.create(host, cont, crt, conf.linkInContainer(), "ipvlan",
                    tmp -> NewLink.ipvlan(tmp, master.index(), conf.mode()).mtu(conf.mtu()), req.ifname(), req.netns());
            undo.add("deleting " + req.ifname(), () -> Links.deleteQuietly(crt, req.ifname()));

            Result addresses = prev;
            if (!fromPrev) {
                Ipam ipam = new Ipam(req.delegator(), conf.ipamType());
                addresses = ipam.add(req);
                undo.add("IPAM cleanup", () -> ipam.del(req));
            }
            Result result = StackedIface.withIface(addresses, iface, req.version().toString());
            StackedIface.configure(cont, crt, req.ifname(), result, true, req.log());
            undo.commit();
            return result.withDns(conf.dns());
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        Ipam ipam = Ipam.of(req);
        if (ipam != null) ipam.del(req);
        Links.deleteContainerIface(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        Conf conf = Conf.load(req.conf());
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open()) {
            Ipam ipam = Ipam.of(req);
            if (ipam != null) ipam.check(req);
            Result.Interface intf = StackedIface.fromPrevResult(req, "ipvlan");
            Rtnl side = MasterLinks.masterSide(host, crt, conf.linkInContainer());
            if (!conf.master().isEmpty()) MasterLinks.master(side, conf.master());
            LinkInfo info = StackedIface.checkLink(crt, intf, "ipvlan");
            if (info.ipvlanMode() != conf.mode()) {
                throw new CniException(ErrorCode.INTERNAL, "container IPVlan mode " + (info.ipvlanMode() == null ? "unknown" : info.ipvlanMode().configName())
                        + " does not match expected value: " + conf.mode().configName());
            }
            StackedIface.checkAddressesAndRoutes(crt, req.ifname(), req.prevResult());
        }
    }

    @Override
    public void gc(PluginRequest req) {
        Ipam.gcOf(req);
    }

    @Override
    public void status(PluginRequest req) {
        Ipam.statusOf(req);
    }
}
