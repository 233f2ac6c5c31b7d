package io.jcni.plugins.main.macvlan;

import io.jcni.linux.Link;
import io.jcni.linux.LinkInfo;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
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
import io.jcni.types.Result;
import java.util.List;

/**
 * The {@code macvlan} plugin: the container gets a macvlan of a host link (the {@code master},
 * by default the interface of the host's default route), with its own MAC on the master's segment.
 *
 * <p>ADD checks the master and the MTU (at most the master's), creates the macvlan under a
 * temporary name directly in the container, renames it CNI_IFNAME, then, with an {@code ipam}
 * section, asks the IPAM plugin for addresses and configures them (arp_notify/ndisc_notify on,
 * so the segment learns the MAC at once); without one the interface is just set up (layer 2
 * only) and the result lists only it. The result's DNS is the config's own, as upstream. A failed
 * ADD removes the interface and releases the addresses. {@code linkInContainer}: the master is a
 * link inside the container and the macvlan is made there.
 *
 * <p>DEL releases the addresses, then deletes CNI_IFNAME; a missing namespace, interface or
 * allocation is success, and DEL does not need the master. CHECK verifies the master, the
 * interface's kind, mode and MAC, its addresses and routes against prevResult. The macvlan lives
 * and dies with the container's namespace, so there is no host state: GC and STATUS are the IPAM
 * plugin's (the reference has no GC).
 */
public final class Macvlan implements Plugin {

    @Override
    public Result add(PluginRequest req) throws Exception {
        MacvlanConf conf = MacvlanConf.load(req.conf(), req.args());
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open();
             Undo undo = new Undo(req.log())) {
            Rtnl side = MasterLinks.masterSide(host, crt, conf.linkInContainer());
            String masterName = conf.master().isEmpty() ? MasterLinks.defaultRouteInterface(side) : conf.master();
            Link master = MasterLinks.master(side, masterName);
            MasterLinks.checkMtu(conf.mtu(), master);

            Result.Interface iface = MasterLinks.create(host, cont, crt, conf.linkInContainer(), "macvlan", tmp -> {
                NewLink l = NewLink.macvlan(tmp, master.index(), conf.mode()).mtu((int) conf.mtu()).mac(conf.mac());
                return conf.bcQueueLen() > 0 ? l.macvlanBcQueueLen((int) conf.bcQueueLen()) : l;
            }, req.ifname(), req.netns());
            undo.add("deleting " + req.ifname(), () -> Links.deleteQuietly(crt, req.ifname()));

            Result result;
            if (conf.ipamType() != null) {
                Ipam ipam = new Ipam(req.delegator(), conf.ipamType());
                Result ipamResult = ipam.add(req);
                undo.add("IPAM cleanup", () -> ipam.del(req));
                result = StackedIface.withIface(ipamResult, iface, req.version().toString());
                StackedIface.configure(cont, crt, req.ifname(), result, true, req.log());
            } else {
                Link l = crt.link(req.ifname());
                try {
                    crt.setUp(l.index());
                } catch (RuntimeException e) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to set \"" + req.ifname() + "\" UP", e);
                }
                result = new Result(req.version().toString(), List.of(iface), List.of(), List.of(), Result.Dns.EMPTY);
            }
            result = result.withDns(conf.dns());
            undo.commit();
            return result;
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        // As upstream: the addresses first, then the interface; nothing else of the config is needed.
        Ipam ipam = Ipam.of(req);
        if (ipam != null) ipam.del(req);
        Links.deleteContainerIface(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        MacvlanConf conf = MacvlanConf.load(req.conf(), req.args());
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open()) {
            Rtnl side = MasterLinks.masterSide(host, crt, conf.linkInContainer());
            String masterName = conf.master().isEmpty() ? MasterLinks.defaultRouteInterface(side) : conf.master();
            MasterLinks.checkMtu(conf.mtu(), MasterLinks.master(side, masterName));
            Ipam ipam = Ipam.of(req);
            if (ipam != null) ipam.check(req);
            Result.Interface intf = StackedIface.fromPrevResult(req, "macvlan");
            LinkInfo info = StackedIface.checkLink(crt, intf, "macvlan");
            if (info.macvlanMode() != conf.mode()) {
                throw new CniException(ErrorCode.INTERNAL, "container macvlan mode " + (info.macvlanMode() == null ? "unknown" : info.macvlanMode().configName())
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
