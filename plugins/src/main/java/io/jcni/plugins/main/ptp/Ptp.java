package io.jcni.plugins.main.ptp;

import static io.jcni.plugins.common.Kernel.kernel;
import static io.jcni.plugins.common.Kernel.kernelIgnoring;

import io.jcni.linux.Errno;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ip.Iface;
import io.jcni.plugins.common.nft.IpMasq;
import io.jcni.plugins.common.ipam.Ipam;
import io.jcni.plugins.common.link.Links;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.common.ip.Sysctls;
import io.jcni.plugins.common.link.OwnedLinks;
import io.jcni.plugins.common.Undo;
import io.jcni.plugins.common.link.Veth;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code ptp} plugin: a veth pair per container, routed rather than bridged.
 *
 * <p>ADD asks the IPAM plugin (required) for addresses, enables IP forwarding on the host and
 * creates the pair: CNI_IFNAME in the container, {@code vethXXXXXXXX} on the host. The container
 * interface gets its address(es) and the IPAM routes, but the subnet route is replaced so that
 * all traffic goes via the gateway: {@code GW/32 dev IF scope link} and {@code SUBNET via GW dev IF}.
 * The host end gets each gateway address as /32 (/128) and a host route to each container IP.
 * The result lists the host veth and the container interface; IPs point at the latter (index 1).
 * The config's {@code dns} replaces the IPAM's when set; {@code mtu} applies to both ends.
 *
 * <p>DEL releases the addresses first, then deletes the container interface; a missing namespace,
 * interface or allocation is success. CHECK verifies the container interface, its addresses and
 * the routes against prevResult. GC removes host veths (tagged with their attachment), masquerading
 * and addresses of attachments the runtime no longer lists; STATUS is the IPAM plugin's.
 * {@code ipMasq: true} masquerades the container's traffic leaving its subnet (see {@link IpMasq}).
 */
public final class Ptp implements Plugin {

    @Override
    public Result add(PluginRequest req) throws Exception {
        IpMasq masq = IpMasq.of(req.conf());
        int mtu = NetConfs.mtu(req.conf());
        Result.Dns confDns = NetConfs.dns(req.conf());
        NetConfs.requireIpamType(req.conf());
        Ipam ipam = Ipam.of(req);

        Result result = ipam.add(req);
        try (Undo undo = new Undo(req.log())) {
            undo.add("IPAM cleanup", () -> ipam.del(req));
            for (Result.IpConfig ipc : result.ips()) {
                if (ipc.gateway() == null) {
                    throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "ptp needs a gateway for every address",
                            "IPAM returned " + ipc.address() + " without a gateway");
                }
            }
            List<Result.IpConfig> allocated = result.ips();
            kernel("Could not enable IP forwarding", () -> Sysctls.enableForward(allocated));
            try (Rtnl host = Rtnl.open();
                 Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Undo inContainer = new Undo(req.log())) {
                Veth veth = Veth.setup(host, crt, cont, req.ifname(), null, mtu, null, OwnedLinks.tag(req), 0);
                inContainer.add("deleting " + req.ifname(), () -> Links.deleteIfExists(crt, req.ifname()));
                List<Result.IpConfig> ips = new ArrayList<>();
                for (Result.IpConfig ipc : result.ips()) ips.add(new Result.IpConfig(ipc.address(), ipc.gateway(), 1));
                result = result.withIps(ips).withInterfaces(List.of(
                        new Result.Interface(veth.host().name(), veth.host().mac().toString(), null),
                        new Result.Interface(veth.container().name(), veth.container().mac().toString(), req.netns())));
                setupContainer(cont, crt, req.ifname(), result, req.log());
                setupHost(host, veth.host().name(), result);
                if (masq != null) {
                    // Registered first: a setup that fails half-way leaves state to remove.
                    inContainer.add("IP masquerade cleanup", () -> masq.teardown(req));
                    masq.setup(req, result.ips());
                }
                if (confDns != null) result = result.withDns(confDns);
                inContainer.commit();
                undo.commit();
                return result;
            }
        }
    }

    /**
     * Addresses and routes in the container. A veth cannot be point-to-point, so the interface gets
     * IP/len, the kernel's "SUBNET dev IF" route is deleted, and "GW/32 dev IF scope link src IP"
     * plus "SUBNET via GW dev IF src IP" force all traffic through the gateway except to it.
     */
    static void setupContainer(Netns cont, Rtnl crt, String ifName, Result result, PrintStream log) {
        Iface.configure(cont, crt, ifName, result, log);
        int index = crt.link(ifName).index();
        for (Result.IpConfig ipc : result.ips()) {
            Cidr addr = ipc.address();
            Cidr subnet = addr.masked();
            IpAddr gw = ipc.gateway();
            Route auto = Route.to(subnet).dev(index).scope(Route.SCOPE_NOWHERE);
            kernel("failed to delete route " + subnet + " dev " + ifName, () -> crt.deleteRoute(auto));
            List<Route> add = List.of(
                    Route.to(Cidr.host(gw)).dev(index).scope(Route.SCOPE_LINK).src(addr.address()),
                    Route.to(subnet).dev(index).scope(Route.SCOPE_UNIVERSE).via(gw).src(addr.address()));
            for (Route r : add) kernel("failed to add route " + r, () -> crt.addRoute(r));
        }
    }

    /** The host end: each gateway as a host address, and a host route to each container address. */
    static void setupHost(Rtnl host, String vethName, Result result) {
        Link veth = kernel("failed to lookup \"" + vethName + "\"", () -> host.link(vethName));
        for (Result.IpConfig ipc : result.ips()) {
            IpAddr gw = ipc.gateway();
            kernel("failed to add IP addr " + gw + "/" + gw.bits() + " to veth", () -> host.addAddress(veth.index(), Cidr.host(gw)));
            IpAddr ip = ipc.ip();
            kernelIgnoring(Errno.EEXIST, "failed to add route on host",
                    () -> host.addRoute(Route.to(Cidr.host(ip)).dev(veth.index()).scope(Route.SCOPE_HOST)));
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        NetConfs.mtu(req.conf());
        Ipam ipam = new Ipam(req.delegator(), NetConfs.requireIpamType(req.conf()));
        // As upstream: the addresses (and their masquerading) first, then the interface.
        IpMasq masq = IpMasq.of(req.conf());
        if (masq != null) masq.teardown(req);
        ipam.del(req);
        Links.deleteContainerIface(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        NetConfs.mtu(req.conf());
        Ipam ipam = new Ipam(req.delegator(), NetConfs.requireIpamType(req.conf()));
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont)) {
            ipam.check(req);
            if (req.prevResult() == null) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "ptp: Required prevResult missing");
            }
            Result result = req.prevResult();
            Result.Interface contMap = null;
            for (Result.Interface i : result.interfaces()) {
                if (req.ifname().equals(i.name()) && req.netns().equals(i.sandbox())) contMap = i;
            }
            String sandbox = contMap == null || contMap.sandbox() == null ? "" : contMap.sandbox();
            if (!req.netns().equals(sandbox)) {
                throw new CniException(ErrorCode.INTERNAL, "Sandbox in prevResult " + sandbox + " doesn't match configured netns: " + req.netns());
            }
            Link l = crt.findLink(contMap.name()).orElseThrow(() -> new CniException(ErrorCode.INTERNAL,
                    "ptp: Container Interface name in prevResult: " + req.ifname() + " not found"));
            if (!"veth".equals(l.kind())) {
                throw new CniException(ErrorCode.INTERNAL, "Error: Container interface " + l.name() + " not of type veth/p2p");
            }
            if (contMap.mac() != null && !contMap.mac().isEmpty() && !contMap.mac().equals(l.mac().toString())) {
                throw new CniException(ErrorCode.INTERNAL, "ptp: Interface " + contMap.name() + " Mac " + contMap.mac()
                        + " doesn't match container Mac: " + l.mac());
            }
            Iface.validateIps(crt, req.ifname(), result.ips());
            Iface.validateRoutes(crt, result.routes());
        }
    }

    @Override
    public void gc(PluginRequest req) {
        OwnedLinks.gcWithIpam(req);
    }

    @Override
    public void status(PluginRequest req) {
        Ipam.statusOf(req);
    }
}
