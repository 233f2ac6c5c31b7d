package io.jcni.overlay;

import io.jcni.linux.MacAddress;
import io.jcni.linux.Neighbor;
import io.jcni.linux.Nexthop;
import io.jcni.linux.Route;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * What the kernel lacks of the remotes the agent programmed, given one snapshot of it. Pure: the
 * dumps are {@link Dataplane#readKernel}'s, the re-programming {@link RemoteProgramming#recover}'s.
 *
 * <p>Why: entries vanish for reasons outside the agent. A link going down takes every route and
 * nexthop object through it (and the neighbours on it) with it, and nothing puts them back when it
 * comes up; an admin may {@code ip route del} one. flanneld's host-gw re-adds such routes every 10 s
 * (flannel's {@code RouteNetwork.routeCheck}); jcni checks every entry it makes, for both backends.
 *
 * <p>A route holding the subnet that jcni did not make (another protocol, not through the agent's
 * VXLAN device) is left alone, as the add leaves it: that family of the remote counts as present.
 */
final class RemoteCheck {
    private RemoteCheck() {}

    /** A kind of entry a remote's family has, in the order the log names them. */
    enum Missing {
        ROUTE, NEXTHOP, NEIGHBOUR, FDB;

        String logName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One family of a programmed remote as the kernel holds it while the remote is programmed.
     *
     * @param nhid      the nexthop object the route goes through; 0: a plain route {@code via} on {@code oif}
     * @param ownDevice the agent's VXLAN device of the family: a route through it counts as jcni's; 0 for host-gw
     * @param neighbour the permanent neighbour (its address and MAC, on the VXLAN device); null when not encapsulated
     * @param fdb       the FDB entry (VTEP MAC → public address, on the VXLAN device); null when not encapsulated
     */
    record Expected(Cidr dst, IpAddr via, int oif, int nhid, int ownDevice, Neighbor neighbour, Neighbor fdb) {}

    /**
     * One dump per kind: the routes of table main of the network's families, the nexthop objects
     * (empty without them), the neighbours of the VXLAN devices, the FDB entries.
     */
    record Kernel(List<Route> routes, List<Nexthop> nexthops, List<Neighbor> neighbours, List<Neighbor> fdb) {}

    /** A neighbour or FDB entry by what makes it ours: device, address, MAC. */
    private record EntryKey(int index, IpAddr address, MacAddress mac) {
        static EntryKey of(Neighbor n) {
            return new EntryKey(n.index(), n.address(), n.mac());
        }
    }

    /**
     * The programmed remotes (by subnet) of which the kernel lacks something, with what it lacks;
     * those it holds whole are not in the answer. {@code expected} gives each remote's families.
     * Linear in the remotes plus the kernel's entries.
     */
    static Map<Cidr, Set<Missing>> missing(Collection<Lease> programmed, Function<Lease, List<Expected>> expected, Kernel kernel) {
        Map<Cidr, List<Route>> routes = new HashMap<>();
        for (Route r : kernel.routes()) {
            if (r.table() != Route.TABLE_MAIN || r.priority() != keyMetric(r.dst())) continue;
            routes.computeIfAbsent(r.dst().masked(), k -> new java.util.ArrayList<>(1)).add(r);
        }
        Map<Integer, Nexthop> nexthops = new HashMap<>();
        for (Nexthop nh : kernel.nexthops()) nexthops.put(nh.id(), nh);
        Set<EntryKey> neighbours = new HashSet<>();
        for (Neighbor n : kernel.neighbours()) {
            if ((n.state() & Neighbor.NUD_PERMANENT) != 0) neighbours.add(EntryKey.of(n));
        }
        Set<EntryKey> fdb = kernel.fdb().stream().map(EntryKey::of).collect(Collectors.toCollection(HashSet::new));

        Map<Cidr, Set<Missing>> out = new LinkedHashMap<>();
        for (Lease l : programmed) {
            Set<Missing> lacks = EnumSet.noneOf(Missing.class);
            for (Expected e : expected.apply(l)) lacks(e, routes.getOrDefault(e.dst().masked(), List.of()), nexthops, neighbours, fdb, lacks);
            if (!lacks.isEmpty()) out.put(l.id(), lacks);
        }
        return out;
    }

    private static void lacks(Expected e, List<Route> atDst, Map<Integer, Nexthop> nexthops, Set<EntryKey> neighbours, Set<EntryKey> fdb,
            Set<Missing> lacks) {
        boolean routed = false;
        for (Route r : atDst) {
            if (!ours(r, e)) return; // someone else's route holds the subnet: left alone, as the add leaves it
            routed |= e.nhid() != 0 ? r.nhid() == e.nhid() : r.nhid() == 0 && e.via().equals(r.gateway()) && r.oif() == e.oif();
        }
        if (!routed) lacks.add(Missing.ROUTE);
        if (e.nhid() != 0) {
            Nexthop nh = nexthops.get(e.nhid());
            if (nh == null || !e.via().equals(nh.gateway()) || nh.oif() != e.oif()) lacks.add(Missing.NEXTHOP);
        }
        if (e.neighbour() != null && !neighbours.contains(EntryKey.of(e.neighbour()))) lacks.add(Missing.NEIGHBOUR);
        if (e.fdb() != null && !fdb.contains(EntryKey.of(e.fdb()))) lacks.add(Missing.FDB);
    }

    /** jcni's by the add's rule ({@link RemoteRoutes#add}): its protocol, its nexthop range, or (VXLAN) through its device. */
    private static boolean ours(Route r, Expected e) {
        return r.protocol() == Dataplane.ROUTE_PROTOCOL || NexthopIds.owned(r.nhid()) || (e.ownDevice() != 0 && r.oif() == e.ownDevice());
    }

    /** The metric of the kernel's key for the agent's routes, which carry none: IPv4's 0, IPv6's default. */
    private static int keyMetric(Cidr dst) {
        return dst.isV6() ? Dataplane.IPV6_DEFAULT_METRIC : 0;
    }

    /** For the log: {@code route,nexthop}. */
    static String describe(Set<Missing> what) {
        return what.stream().map(Missing::logName).collect(Collectors.joining(","));
    }
}
