package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_APPEND;
import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;
import static io.jcni.linux.NetlinkSocket.NLM_F_REPLACE;

import java.util.ArrayList;
import java.util.List;

/** {@link Rtnl}'s neighbours: ARP/NDP entries and bridge FDB entries. */
final class RtnlNeighbors {
    private final NetlinkSocket socket;

    RtnlNeighbors(NetlinkSocket socket) {
        this.socket = socket;
    }

    void addNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, n, "add neighbor ");
    }

    void replaceNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, n, "replace neighbor ");
    }

    void deleteNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_DELNEIGH, 0, n, "delete neighbor ");
    }

    List<Neighbor> neighbors(int index, Family family) {
        return neighborDump(index, family.af(), "list neighbors");
    }

    void addFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, requireFdb(entry), "add fdb ");
    }

    void appendFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND, requireFdb(entry), "append fdb ");
    }

    void deleteFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_DELNEIGH, 0, requireFdb(entry), "delete fdb ");
    }

    List<Neighbor> fdb(int index) {
        return neighborDump(index, Family.AF_BRIDGE, "list fdb");
    }

    private static Neighbor requireFdb(Neighbor n) {
        if (!n.isFdb()) throw new IllegalArgumentException("not an FDB entry (family AF_BRIDGE): " + n);
        return n;
    }

    private void neighborRequest(int type, int flags, Neighbor n, String verb) {
        NlMessage m = new NlMessage(type, flags);
        n.encode(m);
        socket.request(m, verb + describe(n));
    }

    static String describe(Neighbor n) {
        String what = (n.address() != null ? n.address().toString() : "") + (n.mac() != null ? " lladdr " + n.mac() : "");
        return what.trim() + " dev " + n.index();
    }

    private List<Neighbor> neighborDump(int index, int af, String op) {
        NlMessage req = new NlMessage(Rtm.RTM_GETNEIGH, 0).u8(af).u8(0).u16(0).u32(0).u16(0).u8(0).u8(0);
        List<Neighbor> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, op)) {
            if (m.type() != Rtm.RTM_NEWNEIGH) continue;
            Neighbor n = Neighbor.decode(m);
            if (index == 0 || n.index() == index) out.add(n);
        }
        return out;
    }
}
