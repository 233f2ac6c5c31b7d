package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;
import static io.jcni.linux.NetlinkSocket.NLM_F_REPLACE;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@link Rtnl}'s routing: routes, nexthop objects and policy rules, and the requests {@link RtnlChanges} batches. */
final class RtnlRoutes {
    private final NetlinkSocket socket;

    RtnlRoutes(NetlinkSocket socket) {
        this.socket = socket;
    }

    void addRoute(Route route) {
        routeRequest(Rtm.RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, route, false, "add route ");
    }

    void replaceRoute(Route route) {
        routeRequest(Rtm.RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, route, false, "replace route ");
    }

    void deleteRoute(Route route) {
        routeRequest(Rtm.RTM_DELROUTE, 0, route, true, "delete route ");
    }

    List<Route> routes(Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETROUTE, 0).u8(family.af()).zeros(11);
        List<Route> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list routes")) {
            if (m.type() != Rtm.RTM_NEWROUTE || (m.i32(8) & Rtm.RTM_F_CLONED) != 0) continue;
            out.add(Route.decode(m));
        }
        return out;
    }

    List<Route> routes(Family family, int table) {
        return routes(family).stream().filter(r -> r.table() == table).toList();
    }

    private void routeRequest(int type, int flags, Route route, boolean delete, String verb) {
        NlMessage m = new NlMessage(type, flags);
        route.encode(m, delete);
        socket.request(m, verb + describe(route));
    }

    static String describe(Route r) {
        StringBuilder s = new StringBuilder(r.isDefault() ? "default" : r.dst().toString());
        if (r.gateway() != null) s.append(" via ").append(r.gateway());
        if (r.oif() > 0) s.append(" dev ").append(r.oif());
        if (r.table() >= 0) s.append(" table ").append(r.table());
        if (r.nhid() != 0) s.append(" nhid ").append(Integer.toUnsignedString(r.nhid()));
        return s.toString();
    }

    void addNexthop(Nexthop nh) {
        socket.request(nexthopRequest(nh, false), "add nexthop " + describe(nh));
    }

    void replaceNexthop(Nexthop nh) {
        socket.request(nexthopRequest(nh, true), "replace nexthop " + describe(nh));
    }

    void deleteNexthop(int id) {
        socket.request(nexthopIdRequest(Rtm.RTM_DELNEXTHOP, id), "delete nexthop id " + Integer.toUnsignedString(id));
    }

    Optional<Nexthop> nexthop(int id) {
        String op = "get nexthop id " + Integer.toUnsignedString(id);
        try {
            for (NlMsg m : socket.request(nexthopIdRequest(Rtm.RTM_GETNEXTHOP, id), op)) {
                if (m.type() == Rtm.RTM_NEWNEXTHOP) return Optional.of(Nexthop.decode(m));
            }
            return Optional.empty();
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    List<Nexthop> nexthops() {
        NlMessage req = new NlMessage(Rtm.RTM_GETNEXTHOP, 0).zeros(Rtm.NHMSG_SIZE);
        List<Nexthop> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list nexthops")) {
            if (m.type() == Rtm.RTM_NEWNEXTHOP) out.add(Nexthop.decode(m));
        }
        return out;
    }

    /** The RTM_NEWNEXTHOP request, before the socket adds REQUEST|ACK, seq and port id. */
    static NlMessage nexthopRequest(Nexthop nh, boolean replace) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWNEXTHOP, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL));
        nh.encode(m);
        return m;
    }

    static NlMessage nexthopIdRequest(int type, int id) {
        NlMessage m = new NlMessage(type, 0);
        Nexthop.encodeId(m, id);
        return m;
    }

    /** The RTM_NEWROUTE request of {@link Rtnl#addRoute} ({@code replace} false) or {@link Rtnl#replaceRoute}. */
    static NlMessage newRouteRequest(Route route, boolean replace) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWROUTE, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL));
        route.encode(m, false);
        return m;
    }

    static String describe(Nexthop nh) {
        StringBuilder s = new StringBuilder("id ").append(Integer.toUnsignedString(nh.id()));
        if (nh.gateway() != null) s.append(" via ").append(nh.gateway());
        if (nh.oif() > 0) s.append(" dev ").append(nh.oif());
        return s.toString();
    }

    void addRule(Rule rule) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL);
        rule.encode(m);
        socket.request(m, "add rule " + describe(rule));
    }

    void deleteRule(Rule rule) {
        NlMessage m = new NlMessage(Rtm.RTM_DELRULE, 0);
        rule.encode(m);
        socket.request(m, "delete rule " + describe(rule));
    }

    List<Rule> rules(Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETRULE, 0).u8(family.af()).zeros(11);
        List<Rule> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list rules")) {
            if (m.type() == Rtm.RTM_NEWRULE) out.add(Rule.decode(m));
        }
        return out;
    }

    private static String describe(Rule r) {
        StringBuilder s = new StringBuilder();
        if (r.priority() >= 0) s.append("pref ").append(r.priority()).append(' ');
        s.append("from ").append(r.src() == null ? "all" : r.src().toString());
        if (r.dst() != null) s.append(" to ").append(r.dst());
        if (r.table() >= 0) s.append(" table ").append(r.table());
        return s.toString();
    }
}
