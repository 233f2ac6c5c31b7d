package io.jcni.plugins.main.bridge;

import static io.jcni.plugins.common.Kernel.kernel;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ip.Iface;
import io.jcni.plugins.common.nft.IpMasq;
import io.jcni.plugins.common.ipam.Ipam;
import io.jcni.plugins.common.link.Links;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.common.link.OwnedLinks;
import io.jcni.plugins.common.ip.Sysctls;
import io.jcni.plugins.common.Undo;
import io.jcni.plugins.common.link.Veth;
import io.jcni.plugins.skel.Phases.Phase;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code bridge} plugin: attaches containers to a Linux bridge in the host namespace.
 *
 * <p>ADD creates the bridge (default {@code cni0}) if missing and sets it up, then a veth pair
 * with CNI_IFNAME in the container and {@code vethXXXXXXXX} on the host enslaved to the bridge
 * (hairpin and port isolation as configured). With an {@code ipam} section it asks the IPAM plugin
 * for addresses, configures them and the routes on the container interface, and with
 * {@code isGateway} puts the gateway address on the bridge and enables forwarding;
 * {@code isDefaultGateway} also adds a default route via it. Without {@code ipam} the network is
 * layer 2 only. {@code ipMasq: true} masquerades the container's traffic leaving its subnet (see
 * {@link IpMasq}). {@code macspoofchk: true} drops frames from the container's host veth whose
 * source MAC is not the container interface's (see {@link MacSpoofCheck}). The result lists the
 * bridge, the host veth and the container interface, in that order, all IPs pointing at the
 * container interface (index 2).
 *
 * <p>DEL retires the container interface (down, addresses removed, renamed out of CNI_IFNAME's
 * way; the pair is deleted right after the answer: {@link Links#retireContainerIface}), then removes the spoof-check elements
 * (from the attachment's own state, whatever the config says now), the masquerading and the
 * addresses; a missing namespace, interface or allocation is success. CHECK verifies the bridge,
 * the veth pair and the addresses and routes in the container against prevResult. GC removes host
 * veths (tagged with their attachment), spoof-check elements, masquerading and addresses of
 * attachments the runtime no longer lists; STATUS is the IPAM plugin's.
 *
 * <p>Not yet supported (refused on ADD with a config error naming the key): {@code vlan},
 * {@code vlanTrunk}.
 */
public final class Bridge implements Plugin {
    /** Waits for the host end to be operationally up, as upstream: 0, 50, 500, 1000, 1000 ms. */
    private static final int[] PORT_RETRIES_MS = {0, 50, 500, 1000, 1000};

    /** The result with gateways and default routes filled in, and the gateway addresses per family. */
    record Gateways(Result result, List<Cidr> v4, List<Cidr> v6) {}

    @Override
    public Result add(PluginRequest req) throws Exception {
        BridgeConf n = BridgeConf.load(req);
        n.rejectUnsupported();
        if (n.hairpinMode() && n.promiscMode()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cannot set hairpin mode and promiscuous mode at the same time");
        }
        Ipam ipam = Ipam.of(req);
        IpMasq masq = IpMasq.of(req.conf());
        MacSpoofCheck spoof = n.macSpoofChk() ? MacSpoofCheck.forAdd(req.conf()) : null;

        try (Rtnl host = Rtnl.open()) {
            Link br = BridgeDevice.ensureBridge(host, n);
            Phase outer = req.phases().enter(Phase.NETNS);
            try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Undo undo = new Undo(req.log())) {
                req.phases().enter(outer);
                Veth veth = Veth.setup(host, crt, cont, req.ifname(), null, n.mtu(), n.mac(), OwnedLinks.tag(req), br.index());
                undo.add("deleting " + req.ifname(), () -> Links.deleteIfExists(crt, req.ifname()));
                setPortFlags(host, veth.host(), n);
                if (spoof != null) {
                    // Registered first: a setup that fails half-way leaves state to remove.
                    undo.add("MAC spoof check cleanup", () -> spoof.teardown(req));
                    Phase prev = req.phases().enter(Phase.NFT);
                    try {
                        spoof.setup(req, veth.host().name(), veth.container().mac());
                    } finally {
                        req.phases().enter(prev);
                    }
                }
                Result result = new Result(CniVersion.CURRENT.toString(), List.of(
                        new Result.Interface(br.name(), br.mac().toString(), null),
                        new Result.Interface(veth.host().name(), veth.host().mac().toString(), null),
                        new Result.Interface(veth.container().name(), veth.container().mac().toString(), req.netns())),
                        List.of(), List.of(), null);

                if (ipam != null) {
                    result = configureAddresses(host, cont, crt, req, n, ipam, masq, undo, result);
                } else if (!n.disableContainerInterface()) {
                    // Layer 2 only: the container end still has to be up.
                    crt.setUp(veth.container().index());
                }
                result = withCurrentMacs(host, n, veth, result);
                if (n.dns() != null) result = result.withDns(n.dns());
                undo.commit();
                return result;
            }
        }
    }

    /** IPAM's addresses on the container end, the bridge as gateway and masquerading, each undone if a later step fails. */
    private static Result configureAddresses(Rtnl host, Netns cont, Rtnl crt, PluginRequest req, BridgeConf n, Ipam ipam,
                                             IpMasq masq, Undo undo, Result attached) throws Exception {
        Result ipamResult = ipam.add(req);
        undo.add("IPAM cleanup", () -> ipam.del(req));
        Result result = attached.withIps(ipamResult.ips()).withRoutes(ipamResult.routes()).withDns(ipamResult.dns());
        Gateways gws = calcGateways(result, n);
        result = gws.result();
        configureContainer(cont, crt, req, result, n);
        if (n.isGateway()) {
            BridgeDevice.gatewayFamily(host, n, gws.v4(), Sysctls.IPV4_FORWARD);
            BridgeDevice.gatewayFamily(host, n, gws.v6(), Sysctls.IPV6_FORWARD);
        }
        if (masq != null) {
            // Registered first: a setup that fails half-way leaves state to remove.
            undo.add("IP masquerade cleanup", () -> masq.teardown(req));
            Phase prev = req.phases().enter(Phase.NFT);
            try {
                masq.setup(req, result.ips());
            } finally {
                req.phases().enter(prev);
            }
        }
        return result;
    }

    /** The result with the bridge's and the host end's MACs as they are now: both may have changed since creation. */
    private static Result withCurrentMacs(Rtnl host, BridgeConf n, Veth veth, Result result) throws Exception {
        Link hostVeth = n.disableContainerInterface() ? host.link(veth.host().name()) : waitPortUp(host, veth.host().name());
        Link brNow = BridgeDevice.bridgeByName(host, n.bridge());
        List<Result.Interface> ifs = new ArrayList<>(result.interfaces());
        ifs.set(0, new Result.Interface(brNow.name(), brNow.mac().toString(), null));
        ifs.set(1, new Result.Interface(hostVeth.name(), hostVeth.mac().toString(), null));
        return result.withInterfaces(ifs);
    }

    /** DAD and ARP sysctls of the container interface, then its addresses and routes. */
    private static void configureContainer(Netns cont, Rtnl crt, PluginRequest req, Result result, BridgeConf n) {
        String ifName = req.ifname();
        cont.exec(() -> {
            if (n.enableDad()) {
                Sysctls.trySet(Sysctls.perIface("ipv6", ifName, "enhanced_dad"), "1");
                Sysctls.trySet(Sysctls.perIface("ipv6", ifName, "accept_dad"), "1");
            } else {
                Sysctls.trySet(Sysctls.perIface("ipv6", ifName, "accept_dad"), "0");
            }
            Sysctls.trySet(Sysctls.perIface("ipv4", ifName, "arp_notify"), "1");
        });
        Iface.configure(cont, crt, ifName, result, req.log());
    }

    /**
     * The host end joined the bridge at birth ({@link Veth#setup}); a new port has hairpin and
     * isolation off, so only turning one on takes a request (each takes the rtnl lock).
     */
    private static void setPortFlags(Rtnl host, Link hostVeth, BridgeConf n) {
        if (n.hairpinMode()) {
            kernel("failed to setup hairpin mode for " + hostVeth.name(), () -> host.setHairpin(hostVeth.index(), true));
        }
        if (n.portIsolation()) {
            kernel("failed to set isolated on " + hostVeth.name(), () -> host.setIsolated(hostVeth.index(), true));
        }
    }

    private static Link waitPortUp(Rtnl host, String name) throws InterruptedException {
        Link l = null;
        for (int i = 0; i < PORT_RETRIES_MS.length; i++) {
            if (PORT_RETRIES_MS[i] > 0) Thread.sleep(PORT_RETRIES_MS[i]);
            l = host.link(name);
            if (l.operState() == Link.OPER_UP) return l;
        }
        throw new CniException(ErrorCode.INTERNAL, "bridge port in error state: " + operStateName(l.operState()));
    }

    private static String operStateName(int s) {
        return switch (s) {
            case 0 -> "unknown";
            case 1 -> "notpresent";
            case 2 -> "down";
            case 3 -> "lowerlayerdown";
            case 4 -> "testing";
            case 5 -> "dormant";
            case 6 -> "up";
            default -> Integer.toString(s);
        };
    }

    /**
     * Points every IP at the container interface (index 2), fills in missing gateways with the
     * subnet's first address when the bridge is the gateway, adds one default route per family for
     * {@code isDefaultGateway} unless the IPAM already gave one, and collects the gateway
     * addresses (with the IP's prefix length) per family.
     */
    static Gateways calcGateways(Result result, BridgeConf n) {
        List<Cidr> v4 = new ArrayList<>();
        List<Cidr> v6 = new ArrayList<>();
        List<Result.IpConfig> ips = new ArrayList<>();
        List<Result.Route> routes = new ArrayList<>(result.routes());
        boolean[] defaultFound = new boolean[2];
        for (Result.IpConfig ipc : result.ips()) {
            Cidr addr = ipc.address();
            int f = addr.isV6() ? 1 : 0;
            Cidr defaultDst = Cidr.any(addr.isV6());
            IpAddr gateway = ipc.gateway();
            if (gateway == null && n.isGateway()) gateway = addr.network().add(1);
            ips.add(new Result.IpConfig(ipc.address(), gateway, 2));
            if (n.isDefaultGateway()) {
                for (Result.Route r : routes) {
                    if (r.gw() != null && r.dst().masked().equals(defaultDst)) {
                        defaultFound[f] = true;
                        break;
                    }
                }
                if (!defaultFound[f]) {
                    routes.add(new Result.Route(defaultDst, gateway));
                    defaultFound[f] = true;
                }
            }
            if (n.isGateway()) (addr.isV6() ? v6 : v4).add(new Cidr(gateway, addr.prefix()));
        }
        return new Gateways(result.withIps(ips).withRoutes(routes), v4, v6);
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        // Not BridgeConf.load: the mac capability (runtimeConfig.mac) and CNI_ARGS MAC it validates
        // must not stop a DEL; the interface, the masquerading and IPAM are found without them.
        Ipam ipam = Ipam.of(req);
        // As upstream: the interface first, then the addresses. In jcnid the kernel's slow part of
        // the deletion runs after the answer (Links.retireContainerIface says why that is safe).
        Links.retireContainerIface(req);
        Phase prev = req.phases().enter(Phase.NFT);
        try {
            MacSpoofCheck.forCleanup(req.conf()).teardown(req);
            if (ipam != null) {
                IpMasq masq = IpMasq.of(req.conf());
                if (masq != null) masq.teardown(req);
            }
        } finally {
            req.phases().enter(prev);
        }
        if (ipam != null) ipam.del(req);
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        BridgeConf n = BridgeConf.load(req);
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open()) {
            Ipam ipam = Ipam.of(req);
            if (ipam != null) ipam.check(req);
            if (req.prevResult() == null) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Required prevResult missing");
            }
            Result result = req.prevResult();

            Result.Interface brMap = null;
            Result.Interface contMap = null;
            for (Result.Interface i : result.interfaces()) {
                if (n.bridge().equals(i.name())) {
                    brMap = i;
                } else if (req.ifname().equals(i.name()) && req.netns().equals(i.sandbox())) {
                    contMap = i;
                }
            }
            Link br = validateBridge(host, brMap, n);
            String sandbox = contMap == null || contMap.sandbox() == null ? "" : contMap.sandbox();
            if (!req.netns().equals(sandbox)) {
                throw new CniException(ErrorCode.INTERNAL, "Sandbox in prevResult " + sandbox + " doesn't match configured netns: " + req.netns());
            }
            Link cl = validateContainerIface(crt, contMap);

            boolean vethFound = false;
            for (Result.Interface i : result.interfaces()) {
                if (i.name().equals(brMap.name()) || i.name().equals(contMap.name())) continue;
                if (isOurVeth(host, i, br, cl)) {
                    vethFound = true;
                    break;
                }
            }
            if (!vethFound) throw new CniException(ErrorCode.INTERNAL, "CNI veth created for bridge " + n.bridge() + " was not found");

            Iface.validateIps(crt, req.ifname(), result.ips());
            Iface.validateRoutes(crt, result.routes());
        }
    }

    private static Link validateBridge(Rtnl host, Result.Interface intf, BridgeConf n) {
        if (intf == null) throw new CniException(ErrorCode.INTERNAL, "CNI created bridge " + n.bridge() + " in host namespace was not found");
        if (intf.sandbox() != null && !intf.sandbox().isEmpty()) {
            throw new CniException(ErrorCode.INTERNAL, "Interface " + intf.name() + " should not be in sandbox");
        }
        Link l = host.findLink(intf.name()).orElseThrow(
                () -> new CniException(ErrorCode.INTERNAL, "Interface name " + intf.name() + " not found"));
        if (!"bridge".equals(l.kind())) {
            throw new CniException(ErrorCode.INTERNAL, "Interface " + intf.name() + " does not have link type of bridge");
        }
        if (intf.mac() != null && !intf.mac().isEmpty() && !intf.mac().equals(l.mac().toString())) {
            throw new CniException(ErrorCode.INTERNAL, "Bridge interface " + intf.name() + " Mac doesn't match: " + intf.mac());
        }
        if (l.promisc() != n.promiscMode()) {
            throw new CniException(ErrorCode.INTERNAL, "Bridge interface " + intf.name() + " configured Promisc Mode " + n.promiscMode()
                    + " doesn't match current state: " + l.promisc());
        }
        return l;
    }

    private static Link validateContainerIface(Rtnl crt, Result.Interface intf) {
        if (intf == null || intf.name() == null || intf.name().isEmpty()) {
            throw new CniException(ErrorCode.INTERNAL, "Interface name missing");
        }
        Link l = crt.findLink(intf.name()).orElseThrow(
                () -> new CniException(ErrorCode.INTERNAL, "Interface name " + intf.name() + " not found"));
        if (!"veth".equals(l.kind())) {
            throw new CniException(ErrorCode.INTERNAL, "Error: Container interface " + l.name() + " not of type veth");
        }
        if (intf.mac() != null && !intf.mac().isEmpty() && !intf.mac().equals(l.mac().toString())) {
            throw new CniException(ErrorCode.INTERNAL, "Interface " + intf.name() + " Mac " + intf.mac()
                    + " doesn't match container Mac: " + l.mac());
        }
        return l;
    }

    /** The host veth: peer of the container interface, enslaved to the bridge, with the recorded MAC. */
    private static boolean isOurVeth(Rtnl host, Result.Interface intf, Link br, Link cont) {
        if (intf.sandbox() != null && !intf.sandbox().isEmpty()) {
            throw new CniException(ErrorCode.INTERNAL, "Interface " + intf.name() + " should not be in sandbox");
        }
        Link l = host.findLink(intf.name()).orElseThrow(
                () -> new CniException(ErrorCode.INTERNAL, "Interface name " + intf.name() + " not found"));
        if (!"veth".equals(l.kind())) return false;
        if (l.index() != cont.linkIndex() || cont.index() != l.linkIndex() || l.masterIndex() != br.index()) return false;
        if (intf.mac() != null && !intf.mac().isEmpty() && !intf.mac().equals(l.mac().toString())) {
            throw new CniException(ErrorCode.INTERNAL, "Interface " + intf.name() + " Mac doesn't match: " + intf.mac() + " not found");
        }
        return true;
    }

    @Override
    public void gc(PluginRequest req) {
        BridgeConf.load(req);
        MacSpoofCheck.forCleanup(req.conf()).gc(req.networkName(), req.validAttachments());
        OwnedLinks.gcWithIpam(req);
    }

    @Override
    public void status(PluginRequest req) {
        Ipam.statusOf(req);
    }

}
