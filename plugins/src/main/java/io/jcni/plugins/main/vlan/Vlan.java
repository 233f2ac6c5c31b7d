package io.jcni.plugins.main.vlan;

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
 * The {@code vlan} plugin: the container gets an 802.1Q VLAN interface ({@code vlanId}) of the
 * {@code master} (required), or with {@code linkInContainer} of a link inside the container.
 *
 * <p>ADD checks the master and the MTU (at most the master's), creates the VLAN link under a
 * temporary name directly in the container, renames it CNI_IFNAME, and configures the IPAM
 * plugin's addresses (IPAM is required). A kernel without 802.1Q support (module 8021q) answers
 * EOPNOTSUPP: ADD fails with code 50 "the kernel has no vlan support" before any address is
 * allocated; any later failure removes the interface and releases the addresses (upstream leaves
 * the interface). DEL releases the addresses and deletes CNI_IFNAME, idempotently; unlike
 * upstream it does not look the master up, so it cannot fail because the master is gone. CHECK
 * verifies the master, kind, VLAN id, MAC, MTU, addresses and routes. GC and STATUS are the IPAM's.
 */
public final class Vlan implements Plugin {

    record Conf(String master, int vlanId, long mtu, boolean linkInContainer, String ipamType, Result.Dns dns) {
        static Conf load(Map<String, Object> c) {
            String master = Fields.string(c, "master", "");
            if (master == null || master.isEmpty()) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG,
                        "\"master\" field is required. It specifies the host interface name to create the VLAN for");
            }
            Long id = Fields.integer(c, "vlanId", "");
            long vlanId = id == null ? 0 : id;
            if (vlanId < 0 || vlanId > 4094) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid VLAN ID " + vlanId + " (must be between 0 and 4095 inclusive)");
            }
            Long mtu = Fields.integer(c, "mtu", "");
            Result.Dns dns = NetConfs.dns(c);
            return new Conf(master, (int) vlanId, mtu == null ? 0 : mtu, Fields.bool(c, "linkInContainer", "", false),
                    NetConfs.requireIpamType(c), dns == null ? Result.Dns.EMPTY : dns);
        }
    }

    @Override
    public Result add(PluginRequest req) throws Exception {
        Conf conf = Conf.load(req.conf());
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open();
             Undo undo = new Undo(req.log())) {
            Link master = MasterLinks.master(MasterLinks.masterSide(host, crt, conf.linkInContainer()), conf.master());
            MasterLinks.checkMtu(conf.mtu(), master);
            Result.Interface iface = MasterLinks.create(host, cont, crt, conf.linkInContainer(), "vlan",
                    tmp -> NewLink.vlan(tmp, master.index(), conf.vlanId()).mtu((int) conf.mtu()), req.ifname(), req.netns());
            undo.add("deleting " + req.ifname(), () -> Links.deleteQuietly(crt, req.ifname()));

            Ipam ipam = new Ipam(req.delegator(), conf.ipamType());
            Result addresses = ipam.add(req);
            undo.add("IPAM cleanup", () -> ipam.del(req));
            Result result = StackedIface.withIface(addresses, iface, req.version().toString());
            StackedIface.configure(cont, crt, req.ifname(), result, false, req.log());
            undo.commit();
            return result.withDns(conf.dns());
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        new Ipam(req.delegator(), NetConfs.requireIpamType(req.conf())).del(req);
        Links.deleteContainerIface(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        Conf conf = Conf.load(req.conf());
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open()) {
            new Ipam(req.delegator(), conf.ipamType()).check(req);
            Result.Interface intf = StackedIface.fromPrevResult(req, "vlan");
            MasterLinks.master(MasterLinks.masterSide(host, crt, conf.linkInContainer()), conf.master());
            LinkInfo info = StackedIface.checkLink(crt, intf, "vlan");
            if (info.vlanId() != conf.vlanId()) {
                throw new CniException(ErrorCode.INTERNAL, "vlan: link " + intf.name() + " has VLAN id " + info.vlanId()
                        + ", configured " + conf.vlanId());
            }
            if (conf.mtu() != 0 && conf.mtu() != info.link().mtu()) {
                throw new CniException(ErrorCode.INTERNAL, "vlan: configured MTU of " + intf.name() + " is " + conf.mtu()
                        + ", current value is " + info.link().mtu());
            }
            StackedIface.checkAddressesAndRoutes(crt, req.ifname(), req.prevResult());
        }
    }

    @Override
    public void gc(PluginRequest req) {
        new Ipam(req.delegator(), NetConfs.requireIpamType(req.conf())).gc(req);
    }

    @Override
    public void status(PluginRequest req) {
        new Ipam(req.delegator(), NetConfs.requireIpamType(req.conf())).status(req);
    }
}
