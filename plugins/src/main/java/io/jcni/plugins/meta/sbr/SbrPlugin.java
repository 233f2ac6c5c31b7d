package io.jcni.plugins.meta.sbr;

import static io.jcni.plugins.common.Kernel.kernel;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Flock;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.Rule;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code sbr} (source-based routing) meta plugin, chained after the plugin that configured the
 * container interface {@code CNI_IFNAME}. Inside the container it makes traffic from each of the
 * interface's addresses (prevResult IPs of that interface, or without an interface index) leave
 * through that interface, whatever the main table says:
 *
 * <ul>
 *   <li>for each address a routing table, the first from 100 on that no rule and no route uses,
 *       and a rule {@code from <ip>/32 (or /128) lookup <table>};
 *   <li>in that table a default route via the gateway (the address's prevResult gateway, or the
 *       family's entry of {@code gateways}: at most one IPv4 and one IPv6), plus copies of the
 *       interface's main-table routes whose source or gateway is in the address's subnet, or that
 *       have neither;
 *   <li>the interface's routes are then deleted from the main table; with {@code addSourceHints}
 *       the subnet routes stay there (with {@code src <ip>}) and only the others are deleted.
 * </ul>
 *
 * With {@code table} set, only the rules are added, pointing at that (externally managed) table.
 * The work is serialised by an flock on the netns file, as upstream does.
 *
 * <p>DEL deletes the rules whose source is an address of the interface (only rules to
 * {@code table} when it is set) and, unlike upstream, which leaves them until the interface goes,
 * the interface's routes in the tables those rules pointed to (not with {@code table}). A missing
 * netns or interface is success. CHECK does nothing, as upstream.
 *
 * <p>Config keys are those of current upstream ({@code table}, {@code gateways},
 * {@code addSourceHints}); the reference plugin 1.1.1 knows none of them and, for a single
 * address, ends in the same state (verified in the tests). One more deliberate difference: the
 * tables for the second and later addresses skip every table any route uses, where upstream only
 * looks at the interface's own routes by then.
 */
public final class SbrPlugin implements Plugin {
    static final int FIRST_TABLE = 100;

    record Config(Integer table, IpAddr gatewayV4, IpAddr gatewayV6, boolean addSourceHints) {}

    static Config config(PluginRequest req) {
        Long t = Fields.integer(req.conf(), "table", "");
        if (t != null && (t < 0 || t > 0xFFFFFFFFL)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'table'", "expected a table number, got " + t);
        }
        List<String> gws = Fields.stringList(req.conf(), "gateways", "");
        IpAddr v4 = null;
        IpAddr v6 = null;
        if (gws != null) {
            if (gws.size() > 2) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'gateways'",
                        "gateways list cannot contain more than 2 entries (one IPv4, one IPv6)");
            }
            for (String g : gws) {
                IpAddr ip = IpAddr.tryParse(g);
                if (ip == null) {
                    throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'gateways'", "invalid static gateway IP address: " + g);
                }
                if (ip.isV6() ? v6 != null : v4 != null) {
                    throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'gateways'",
                            "gateways list contains multiple IPv" + (ip.isV6() ? "6" : "4") + " addresses");
                }
                if (ip.isV6()) v6 = ip;
                else v4 = ip;
            }
        }
        return new Config(t == null ? null : t.intValue(), v4, v6, Fields.bool(req.conf(), "addSourceHints", "", false));
    }

    @Override
    public Result add(PluginRequest req) throws Exception {
        Config cfg = config(req);
        if (req.prevResult() == null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "This plugin must be called as chained plugin");
        }
        Result prev = req.prevResult();
        List<Result.IpConfig> ips = ipConfigs(req.ifname(), prev);
        try (Flock lock = lock(req.netns()); Netns ns = Namespaces.open(req.netns()); Rtnl rt = Rtnl.open(ns)) {
            if (cfg.table() != null) {
                for (Result.IpConfig ip : ips) rt.addRule(Rule.from(hostPrefix(ip), cfg.table()));
            } else {
                doRoutes(rt, ips, req.ifname(), cfg, req.log());
            }
        }
        return prev;
    }

    /** The IPs of {@code ifname}: those whose interface index names it, or that have no index. */
    static List<Result.IpConfig> ipConfigs(String ifname, Result prev) {
        if (prev.ips().isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "No IP addresses supplied on interface: " + ifname);
        }
        List<Result.IpConfig> out = new ArrayList<>();
        for (Result.IpConfig ip : prev.ips()) {
            Integer i = ip.interfaceIndex();
            if (i != null && i >= 0 && i < prev.interfaces().size() && !prev.interfaces().get(i).name().equals(ifname)) continue;
            out.add(ip);
        }
        return out;
    }

    private static void doRoutes(Rtnl rt, List<Result.IpConfig> ips, String ifname, Config cfg, PrintStream log) {
        List<Rule> rules = rt.rules(Family.ALL);
        List<Route> allRoutes = rt.routes(Family.ALL);
        Set<Integer> used = new LinkedHashSet<>();
        for (Rule r : rules) used.add(r.table());
        for (Route r : allRoutes) used.add(r.table());

        Link link = rt.findLink(ifname).orElseThrow(() -> new CniException(ErrorCode.INTERNAL,
                "Cannot find network interface " + ifname));
        List<Route> linkRoutes = allRoutes.stream()
                .filter(r -> r.oif() == link.index() && r.table() == Route.TABLE_MAIN)
                .toList();

        int table = nextFree(used, FIRST_TABLE);
        for (Result.IpConfig ipc : ips) {
            addTable(rt, ipc, table, link, linkRoutes, cfg);
            used.add(table);
            table = nextFree(used, table + 1);
        }
        if (cfg.addSourceHints()) {
            addSourceHints(rt, ips, link, linkRoutes, log);
        } else {
            for (Route r : linkRoutes) {
                try {
                    rt.deleteRoute(r);
                } catch (ErrnoException e) {
                    if (!e.is(Errno.ESRCH)) throw new CniException(ErrorCode.INTERNAL, "Failed to delete route", r + ": " + e.getMessage(), e);
                }
            }
        }
    }

    /** One address's table: the rule sending its traffic there, the default route and its copies of the link's routes. */
    private static void addTable(Rtnl rt, Result.IpConfig ipc, int table, Link link, List<Route> linkRoutes, Config cfg) {
        Cidr cidr = ipc.address();
        rt.addRule(Rule.from(hostPrefix(ipc), table));
        IpAddr gw = cidr.isV6() ? cfg.gatewayV6() : cfg.gatewayV4();
        if (gw == null) gw = ipc.gateway();
        if (gw != null) {
            Route viaGw = Route.defaultRoute(cidr.isV6() ? Family.INET6 : Family.INET).via(gw).dev(link.index()).table(table);
            kernel("Failed to add default route to " + gw, () -> rt.addRoute(viaGw));
        }
        // The interface plugin put the interface's routes in the main table; copy the ones
        // that belong to this address (or to no address in particular) into its table.
        for (Route r : linkRoutes) {
            boolean generic = r.src() == null && r.gateway() == null;
            if (generic || contains(cidr, r.src()) || contains(cidr, r.gateway())) {
                try {
                    rt.replaceRoute(r.table(table));
                } catch (ErrnoException e) {
                    throw new CniException(ErrorCode.INTERNAL, "Failed to readd route", r + ": " + e.getMessage(), e);
                }
            }
        }
    }

    /** addSourceHints: subnet routes with each address as source hint replace the link's non-link-scope routes in main. */
    private static void addSourceHints(Rtnl rt, List<Result.IpConfig> ips, Link link, List<Route> linkRoutes, PrintStream log) {
        for (Result.IpConfig ipc : ips) {
            Cidr cidr = ipc.address();
            Route hint = Route.to(cidr.masked()).dev(link.index()).src(cidr.address())
                    .table(Route.TABLE_MAIN).scope(Route.SCOPE_LINK);
            try {
                rt.replaceRoute(hint);
            } catch (ErrnoException e) {
                log.println("sbr: warning: failed to add subnet route with source hint: " + e.getMessage());
            }
        }
        for (Route r : linkRoutes) {
            if (r.scope() == Route.SCOPE_LINK) continue;
            try {
                rt.deleteRoute(r);
            } catch (ErrnoException e) {
                log.println("sbr: warning: failed to delete route " + r + ": " + e.getMessage());
            }
        }
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        Config cfg = config(req);
        if (req.netns().isEmpty() || !Files.exists(Path.of(req.netns()))) return;
        Netns ns = Namespaces.openIfExists(req.netns());
        if (ns == null) return;
        try (Flock lock = lock(req.netns()); ns; Rtnl rt = Rtnl.open(ns)) {
            Link link = rt.findLink(req.ifname()).orElse(null);
            if (link == null) return;
            Set<IpAddr> addrs = new HashSet<>();
            for (Address a : rt.addresses(link.index(), Family.ALL)) addrs.add(a.address());

            CniException failure = null;
            Set<Integer> tables = new LinkedHashSet<>();
            for (Rule r : rt.rules(Family.ALL)) {
                if (r.src() == null || !addrs.contains(r.src().address())) continue;
                if (cfg.table() != null && r.table() != cfg.table()) continue;
                try {
                    rt.deleteRule(r);
                    tables.add(r.table());
                } catch (ErrnoException e) {
                    if (!e.is(Errno.ENOENT)) failure = new CniException(ErrorCode.INTERNAL, "Failed to delete rule", e);
                }
            }
            if (cfg.table() == null && !tables.isEmpty()) {
                for (Route r : rt.routes(Family.ALL)) {
                    if (!tables.contains(r.table()) || r.oif() != link.index() || isReserved(r.table())) continue;
                    try {
                        rt.deleteRoute(r);
                    } catch (ErrnoException e) {
                        if (!e.is(Errno.ESRCH)) failure = new CniException(ErrorCode.INTERNAL, "Failed to delete route", e);
                    }
                }
            }
            if (failure != null) throw failure;
        }
    }

    @Override
    public void check(PluginRequest req) {
        config(req);
    }

    private static boolean isReserved(int table) {
        return table == 0 || table == Route.TABLE_DEFAULT || table == Route.TABLE_MAIN || table == Route.TABLE_LOCAL;
    }

    private static Flock lock(String netns) {
        if (netns == null || netns.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETNS, "no network namespace given");
        }
        if (!Files.exists(Path.of(netns))) {
            throw new CniException(ErrorCode.INVALID_NETNS, "failed to open netns \"" + netns + "\"", "no such file");
        }
        try {
            return Flock.lock(Path.of(netns));
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INVALID_NETNS, "failed to open netns \"" + netns + "\"", e);
        }
    }

    static int nextFree(Set<Integer> used, int candidate) {
        int t = candidate;
        while (used.contains(t)) t++;
        return t;
    }

    private static Cidr hostPrefix(Result.IpConfig ipc) {
        return Cidr.host(ipc.ip());
    }

    private static boolean contains(Cidr cidr, IpAddr a) {
        return a != null && cidr.contains(a);
    }
}
