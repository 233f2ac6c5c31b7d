package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_REPLACE;

import java.util.ArrayList;
import java.util.List;

/**
 * Changes sent several to a datagram ({@link NetlinkSocket#requestEach}): one system call pair
 * per 64 instead of per change, for an agent programming thousands of routes. Each applies or
 * fails on its own, in order; {@link Rtnl#apply} returns each one's outcome.
 */
public final class RtnlChanges {
    private final List<NlMessage> messages = new ArrayList<>();
    private final List<String> operations = new ArrayList<>();

    public RtnlChanges addNexthop(Nexthop nh) {
        return add(RtnlRoutes.nexthopRequest(nh, false), "add nexthop " + RtnlRoutes.describe(nh));
    }

    public RtnlChanges replaceNexthop(Nexthop nh) {
        return add(RtnlRoutes.nexthopRequest(nh, true), "replace nexthop " + RtnlRoutes.describe(nh));
    }

    public RtnlChanges deleteNexthop(int id) {
        return add(RtnlRoutes.nexthopIdRequest(Rtm.RTM_DELNEXTHOP, id), "delete nexthop id " + Integer.toUnsignedString(id));
    }

    public RtnlChanges addRoute(Route r) {
        return add(RtnlRoutes.newRouteRequest(r, false), "add route " + RtnlRoutes.describe(r));
    }

    public RtnlChanges replaceRoute(Route r) {
        return add(RtnlRoutes.newRouteRequest(r, true), "replace route " + RtnlRoutes.describe(r));
    }

    public RtnlChanges deleteRoute(Route r) {
        NlMessage m = new NlMessage(Rtm.RTM_DELROUTE, 0);
        r.encode(m, true);
        return add(m, "delete route " + RtnlRoutes.describe(r));
    }

    public RtnlChanges replaceNeighbor(Neighbor n) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
        n.encode(m);
        return add(m, "replace neighbor " + RtnlNeighbors.describe(n));
    }

    public RtnlChanges deleteNeighbor(Neighbor n) {
        NlMessage m = new NlMessage(Rtm.RTM_DELNEIGH, 0);
        n.encode(m);
        return add(m, "delete neighbor " + RtnlNeighbors.describe(n));
    }

    /** Sends the changes on {@code socket}; per change, in order, null (done) or its error. */
    List<ErrnoException> sendOn(NetlinkSocket socket) {
        if (messages.isEmpty()) return List.of();
        return socket.requestEach(messages, operations);
    }

    public int size() {
        return messages.size();
    }

    private RtnlChanges add(NlMessage m, String operation) {
        messages.add(m);
        operations.add(operation);
        return this;
    }
}
