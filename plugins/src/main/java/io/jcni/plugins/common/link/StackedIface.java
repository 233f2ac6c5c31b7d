package io.jcni.plugins.common.link;

import io.jcni.linux.Link;
import io.jcni.linux.LinkInfo;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ip.Iface;
import io.jcni.plugins.common.ip.Sysctls;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The container side that macvlan, ipvlan, vlan and dummy share: the IPAM result applied to the one
 * interface they create (every IP belongs to interface 0), and CHECK of that interface against
 * prevResult, with the reference plugins' messages.
 */
public final class StackedIface {
    private StackedIface() {}

    /** {@code ipam}'s addresses and routes on {@code iface}, all IPs pointing at it (interface 0). */
    public static Result withIface(Result ipam, Result.Interface iface, String version) {
        List<Result.IpConfig> ips = new ArrayList<>();
        for (Result.IpConfig ipc : ipam.ips()) ips.add(new Result.IpConfig(ipc.address(), ipc.gateway(), 0));
        return new Result(version, List.of(iface), ips, ipam.routes(), ipam.dns());
    }

    /**
     * Sets the interface up with the result's addresses and routes. With {@code announce}, as
     * macvlan and ipvlan do, the kernel first gets arp_notify/ndisc_notify on for it, so the
     * neighbours on the segment learn the new MAC at once (failures to set those are ignored).
     */
    public static void configure(Netns cont, Rtnl crt, String ifName, Result result, boolean announce, PrintStream log) {
        if (announce) {
            cont.exec(() -> {
                Sysctls.trySet(Sysctls.perIface("ipv4", ifName, "arp_notify"), "1");
                Sysctls.trySet(Sysctls.perIface("ipv6", ifName, "ndisc_notify"), "1");
            });
        }
        Iface.configure(cont, crt, ifName, result, log);
    }

    /** The prevResult's interface named CNI_IFNAME in CNI_NETNS; CHECK without prevResult fails. */
    public static Result.Interface fromPrevResult(PluginRequest req, String plugin) {
        Result prev = req.prevResult();
        if (prev == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, plugin + ": required prevResult missing");
        Result.Interface found = null;
        for (Result.Interface i : prev.interfaces()) {
            if (req.ifname().equals(i.name()) && req.netns().equals(i.sandbox())) found = i;
        }
        String sandbox = found == null || found.sandbox() == null ? "" : found.sandbox();
        if (!req.netns().equals(sandbox)) {
            throw new CniException(ErrorCode.INTERNAL, "sandbox in prevResult " + sandbox + " doesn't match configured netns: " + req.netns());
        }
        return found;
    }

    /** The container link of {@code intf}, which must exist, be of {@code kind} and have the listed MAC. */
    public static LinkInfo checkLink(Rtnl crt, Result.Interface intf, String kind) {
        if (intf.name() == null || intf.name().isEmpty()) {
            throw new CniException(ErrorCode.INTERNAL, "container interface name missing in prevResult");
        }
        LinkInfo info;
        try {
            info = crt.linkInfo(intf.name());
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "container Interface name in prevResult: " + intf.name() + " not found");
        }
        Link l = info.link();
        if (!kind.equals(l.kind())) {
            throw new CniException(ErrorCode.INTERNAL, "error: Container interface " + l.name() + " not of type " + kind);
        }
        if (intf.mac() != null && !intf.mac().isEmpty() && !intf.mac().equals(String.valueOf(l.mac()))) {
            throw new CniException(ErrorCode.INTERNAL, "interface " + intf.name() + " Mac " + intf.mac() + " doesn't match container Mac: " + l.mac());
        }
        return info;
    }

    /** The result's addresses on CNI_IFNAME and its routes in the container's tables. */
    public static void checkAddressesAndRoutes(Rtnl crt, String ifName, Result prev) {
        Iface.validateIps(crt, ifName, prev.ips());
        Iface.validateRoutes(crt, prev.routes());
    }
}
