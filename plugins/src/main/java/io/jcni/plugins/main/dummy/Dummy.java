package io.jcni.plugins.main.dummy;

import io.jcni.linux.ErrnoException;
import io.jcni.linux.Errno;
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
import io.jcni.types.Result;

/**
 * The {@code dummy} plugin: a dummy interface CNI_IFNAME in the container (packets to it are
 * routed locally, never transmitted), with the IPAM plugin's addresses; IPAM is required.
 *
 * <p>ADD creates the link directly under CNI_IFNAME in the container, then asks IPAM; the result
 * keeps the IPAM's DNS, as upstream. A kernel without the dummy driver answers EOPNOTSUPP: ADD
 * fails with code 50 "the kernel has no dummy support" before any address is allocated; a later
 * failure removes the link and releases the addresses. DEL releases the addresses and deletes
 * CNI_IFNAME, idempotently. CHECK verifies kind, MAC, that it is up, and its addresses. GC and
 * STATUS are the IPAM plugin's.
 */
public final class Dummy implements Plugin {

    private static String ipamType(PluginRequest req) {
        String t = NetConfs.ipamType(req.conf());
        if (t == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "dummy interface requires an IPAM configuration");
        return t;
    }

    @Override
    public Result add(PluginRequest req) throws Exception {
        Ipam ipam = new Ipam(req.delegator(), ipamType(req));
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Undo undo = new Undo(req.log())) {
            try {
                crt.addLink(NewLink.dummy(req.ifname()));
            } catch (ErrnoException e) {
                if (e.is(Errno.EOPNOTSUPP)) throw MasterLinks.missingDriver("dummy", e);
                throw new CniException(ErrorCode.INTERNAL, "failed to create dummy", e);
            }
            undo.add("deleting " + req.ifname(), () -> Links.deleteQuietly(crt, req.ifname()));
            Result.Interface iface = new Result.Interface(req.ifname(), String.valueOf(crt.link(req.ifname()).mac()), req.netns());

            Result addresses = ipam.add(req);
            undo.add("IPAM cleanup", () -> ipam.del(req));
            Result result = StackedIface.withIface(addresses, iface, req.version().toString());
            StackedIface.configure(cont, crt, req.ifname(), result, false, req.log());
            undo.commit();
            return result;
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        new Ipam(req.delegator(), ipamType(req)).del(req);
        Links.deleteContainerIface(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        Ipam ipam = new Ipam(req.delegator(), ipamType(req));
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont)) {
            ipam.check(req);
            Result.Interface intf = StackedIface.fromPrevResult(req, "dummy");
            LinkInfo info = StackedIface.checkLink(crt, intf, "dummy");
            if (!info.link().up()) throw new CniException(ErrorCode.INTERNAL, "interface " + intf.name() + " is down");
            io.jcni.plugins.common.ip.Iface.validateIps(crt, req.ifname(), req.prevResult().ips());
        }
    }

    @Override
    public void gc(PluginRequest req) {
        new Ipam(req.delegator(), ipamType(req)).gc(req);
    }

    @Override
    public void status(PluginRequest req) {
        new Ipam(req.delegator(), ipamType(req)).status(req);
    }
}
