package io.jcni.plugins.common.ip;

import static io.jcni.plugins.common.Kernel.kernel;

import io.jcni.linux.Address;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.Sysctl;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.io.PrintStream;
import java.util.List;

/** Configuring and verifying a container interface from a result (pkg/ipam ConfigureIface, pkg/ip validation). */
public final class Iface {
    /** How long IPv6 addresses may stay tentative before routes are added anyway (as upstream: 10 s). */
    static final long SETTLE_MILLIS = 10_000;

    private Iface() {}

    /**
     * Sets {@code ifName} up, adds every IP of {@code res} whose interface index names it, waits for
     * IPv6 addresses to leave DAD, and adds the result's routes, a route without gateway using the
     * first gateway of its family. IPv6 is enabled on lo and the interface first if needed.
     *
     * @param ns the namespace {@code rt} is bound to, for its sysctls
     * @param log the call's stderr, for warnings
     */
    public static void configure(Netns ns, Rtnl rt, String ifName, Result res, PrintStream log) {
        if (res.interfaces().isEmpty()) throw new CniException(ErrorCode.INTERNAL, "no interfaces to configure");
        Link link = kernel("failed to lookup \"" + ifName + "\"", () -> rt.link(ifName));
        rt.setUp(link.index());

        IpAddr v4gw = null;
        IpAddr v6gw = null;
        boolean ipv6Enabled = false;
        for (Result.IpConfig ipc : res.ips()) {
            Integer idx = ipc.interfaceIndex();
            if (idx == null) continue;
            if (idx < 0 || idx >= res.interfaces().size() || !res.interfaces().get(idx).name().equals(ifName)) {
                throw new CniException(ErrorCode.INTERNAL, "failed to add IP addr " + ipc.address() + " to \"" + ifName
                        + "\": invalid interface index");
            }
            Cidr addr = ipc.address();
            if (addr.isV6() && !ipv6Enabled) {
                ns.exec(() -> {
                    for (String i : List.of("lo", ifName)) enableIpv6(i, log);
                });
                ipv6Enabled = true;
            }
            kernel("failed to add IP addr " + ipc.address() + " to \"" + ifName + "\"",
                    () -> rt.addAddress(link.index(), addr));
            if (ipc.gateway() != null) {
                IpAddr gw = ipc.gateway();
                if (!gw.isV6()) {
                    if (v4gw == null) v4gw = gw;
                } else if (v6gw == null) {
                    v6gw = gw;
                }
            }
        }
        if (v6gw != null) settleAddresses(rt, link.index(), SETTLE_MILLIS, log);

        for (Result.Route r : res.routes()) {
            IpAddr gw = r.gw() != null ? r.gw() : r.isIpv6() ? v6gw : v4gw;
            Route route = toRoute(r, link.index(), gw);
            kernel("failed to add route '" + r.dst() + " via " + (gw == null ? "<nil>" : gw) + " dev " + ifName + "'", () -> rt.addRoute(route));
        }
    }

    /** A result route as a kernel route on {@code index}, with the 1.1.0 attributes when present. */
    static Route toRoute(Result.Route r, int index, IpAddr gw) {
        Route route = Route.to(r.dst()).dev(index);
        if (gw != null) route = route.via(gw);
        if (r.mtu() != null && r.mtu() > 0) route = route.mtu(r.mtu());
        if (r.advmss() != null && r.advmss() > 0) route = route.advmss(r.advmss());
        if (r.priority() != null) route = route.metric(r.priority());
        if (r.table() != null) route = route.table(r.table());
        if (r.scope() != null) route = route.scope(r.scope());
        return route;
    }

    private static void enableIpv6(String ifName, PrintStream log) {
        String key = Sysctls.perIface("ipv6", ifName, "disable_ipv6");
        String value;
        try {
            value = Sysctl.get(key);
        } catch (ErrnoException e) {
            log.println("failed to read sysctl " + key + ": " + e.getMessage());
            return;
        }
        if (value.equals("0")) return;
        kernel("failed to enable IPv6 for interface \"" + ifName + "\" (" + key + "=" + value + ")", () -> Sysctl.set(key, "0"));
    }

    /**
     * Waits (bounded) until no IPv6 address of the link is tentative (ip.SettleAddresses); a
     * timeout is not an error, as upstream ignores it, but DAD failure is reported on {@code log}.
     *
     * @return true when every address settled
     */
    public static boolean settleAddresses(Rtnl rt, int index, long timeoutMillis, PrintStream log) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (true) {
            boolean tentative = false;
            for (Address a : rt.addresses(index, Family.INET6)) {
                if ((a.flags() & Address.IFA_F_DADFAILED) != 0) {
                    log.println("link " + index + " has address " + a.address() + " in DADFAILED state");
                    return false;
                }
                if ((a.flags() & Address.IFA_F_TENTATIVE) != 0) tentative = true;
            }
            if (!tentative) return true;
            if (System.nanoTime() > deadline) return false;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    /** ip.ValidateExpectedInterfaceIPs: every IP of the result is on {@code ifName} with its prefix length. */
    public static void validateIps(Rtnl rt, String ifName, List<Result.IpConfig> ips) {
        Link link = rt.findLink(ifName).orElseThrow(
                () -> new CniException(ErrorCode.INTERNAL, "Cannot find container link " + ifName));
        List<Address> addrs = rt.addresses(link.index(), Family.ALL);
        for (Result.IpConfig ipc : ips) {
            Cidr want = ipc.address();
            boolean found = addrs.stream().anyMatch(
                    a -> a.prefixLength() == want.prefix() && a.address().equals(want.address()));
            if (!found) {
                throw new CniException(ErrorCode.INTERNAL, "Failed to match addr " + ipc.address() + " on interface " + ifName);
            }
        }
    }

    /**
     * ip.ValidateExpectedRoute: every route of the result is in the routing table (main unless the
     * route names one); a default route or one without gateway matches on destination alone,
     * others on destination and gateway.
     */
    public static void validateRoutes(Rtnl rt, List<Result.Route> routes) {
        for (Result.Route r : routes) {
            Cidr dst = r.dst().masked();
            Family fam = dst.isV6() ? Family.INET6 : Family.INET;
            int table = r.table() != null ? r.table() : Route.TABLE_MAIN;
            IpAddr gw = r.gw();
            boolean isDefault = dst.prefix() == 0;
            boolean found = false;
            for (Route k : rt.routes(fam, table)) {
                if (!k.dst().masked().equals(dst)) continue;
                // A route without gateway in the result was installed via the family's gateway
                // (configure), so it matches any; upstream insists on none and fails such CHECKs.
                if (!isDefault && gw != null && (k.gateway() == null || !gw.equals(k.gateway()))) continue;
                found = true;
                break;
            }
            if (!found) {
                throw new CniException(ErrorCode.INTERNAL, "Expected Route {Dst:" + r.dst() + " GW:" + (r.gw() == null ? "<nil>" : r.gw())
                        + "} not found in routing table");
            }
        }
    }
}
