package io.jcni.linux;

import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel's connection tracking table through ctnetlink (NETLINK_NETFILTER): list the flows of
 * one protocol to one port, and delete them. portmap uses it on ADD as the reference does: a UDP
 * "connection" to a host port tracked before the mapping existed keeps its old translation (none)
 * for as long as packets keep coming, so the new container would never see them.
 *
 * <p>The table of the namespace the socket was opened in: {@link #open()} uses the calling thread's.
 * Dumps ask the kernel to filter (CTA_FILTER, Linux 5.8+) so only matching flows are copied out;
 * on older kernels the filter is ignored and the flows are matched here.
 */
public final class Conntrack implements AutoCloseable {
    static final int NETLINK_NETFILTER = 12;
    private static final int NFNL_SUBSYS_CTNETLINK = 1;
    private static final int IPCTNL_MSG_CT_GET = 1;
    private static final int IPCTNL_MSG_CT_DELETE = 2;

    private static final int CTA_TUPLE_ORIG = 1;
    private static final int CTA_ZONE = 18;
    private static final int CTA_FILTER = 25;
    private static final int CTA_FILTER_ORIG_FLAGS = 1;
    private static final int CTA_FILTER_REPLY_FLAGS = 2;
    private static final int CTA_TUPLE_IP = 1;
    private static final int CTA_TUPLE_PROTO = 2;
    private static final int CTA_IP_V4_SRC = 1;
    private static final int CTA_IP_V4_DST = 2;
    private static final int CTA_IP_V6_SRC = 3;
    private static final int CTA_IP_V6_DST = 4;
    private static final int CTA_PROTO_NUM = 1;
    private static final int CTA_PROTO_SRC_PORT = 2;
    private static final int CTA_PROTO_DST_PORT = 3;
    /** CTA_FILTER_FLAG(CTA_PROTO_NUM) | CTA_FILTER_FLAG(CTA_PROTO_DST_PORT): bits 3 and 5. */
    private static final int FILTER_PROTO_NUM_AND_DST_PORT = (1 << 3) | (1 << 5);

    public static final int IPPROTO_TCP = 6;
    public static final int IPPROTO_UDP = 17;

    /** One tracked flow, by its original direction. */
    public record Flow(Family family, int protocol, IpAddr src, IpAddr dst, int srcPort, int dstPort,
                       byte[] origTuple, int zone) {}

    private final NetlinkSocket nl;

    private Conntrack(NetlinkSocket nl) {
        this.nl = nl;
    }

    /** ctnetlink in the calling thread's network namespace. */
    public static Conntrack open() {
        return new Conntrack(NetlinkSocket.open(NETLINK_NETFILTER));
    }

    /** ctnetlink in {@code ns}. */
    public static Conntrack open(Netns ns) {
        return new Conntrack(NetlinkSocket.open(NETLINK_NETFILTER, ns));
    }

    /** The flows of {@code protocol} (TCP or UDP) whose original destination port is {@code port}. */
    public List<Flow> flowsTo(Family family, int protocol, int port) {
        NlMessage m = header(IPCTNL_MSG_CT_GET, family);
        int f = m.nest(CTA_FILTER | NlMessage.NLA_F_NESTED);
        m.attrU32(CTA_FILTER_ORIG_FLAGS, FILTER_PROTO_NUM_AND_DST_PORT).attrU32(CTA_FILTER_REPLY_FLAGS, 0);
        m.end(f);
        int t = m.nest(CTA_TUPLE_ORIG | NlMessage.NLA_F_NESTED);
        int p = m.nest(CTA_TUPLE_PROTO | NlMessage.NLA_F_NESTED);
        m.attrU8(CTA_PROTO_NUM, protocol).attrBe16(CTA_PROTO_DST_PORT, port);
        m.end(p);
        m.end(t);
        List<Flow> out = new ArrayList<>();
        for (NlMsg r : nl.dump(m, "list conntrack " + family + " " + protocol + " to port " + port)) {
            Flow flow = parse(r, family);
            if (flow != null && flow.protocol() == protocol && flow.dstPort() == port) out.add(flow);
        }
        return out;
    }

    /** Deletes {@code flow}; false if it was already gone. */
    public boolean delete(Flow flow) {
        NlMessage m = header(IPCTNL_MSG_CT_DELETE, flow.family());
        // Never without the tuple: a CT_DELETE without one flushes the whole table.
        if (flow.origTuple() == null || flow.origTuple().length == 0) throw new IllegalArgumentException("flow without a tuple");
        m.attr(CTA_TUPLE_ORIG | NlMessage.NLA_F_NESTED, flow.origTuple());
        if (flow.zone() != 0) m.attrBe16(CTA_ZONE, flow.zone());
        try {
            nl.request(m, "delete conntrack flow " + flow.src() + ":" + flow.srcPort() + " -> "
                    + flow.dst() + ":" + flow.dstPort());
            return true;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return false;
            throw e;
        }
    }

    /** Deletes every flow of {@code protocol} to {@code port}; returns how many went. */
    public int deleteFlowsTo(Family family, int protocol, int port) {
        int n = 0;
        for (Flow f : flowsTo(family, protocol, port)) if (delete(f)) n++;
        return n;
    }

    @Override
    public void close() {
        nl.close();
    }

    private static NlMessage header(int msg, Family family) {
        NlMessage m = new NlMessage((NFNL_SUBSYS_CTNETLINK << 8) | msg, 0);
        m.u8(family.af()).u8(0).u16(0); // struct nfgenmsg: family, NFNETLINK_V0, res_id (big endian) 0
        return m;
    }

    private static Flow parse(NlMsg r, Family family) {
        NlAttrs a = r.attrs(4);
        NlAttrs tuple = a.nested(CTA_TUPLE_ORIG);
        if (tuple == null) return null;
        NlAttrs ip = tuple.nested(CTA_TUPLE_IP);
        NlAttrs proto = tuple.nested(CTA_TUPLE_PROTO);
        if (ip == null || proto == null) return null;
        IpAddr src = address(ip, family == Family.INET6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC);
        IpAddr dst = address(ip, family == Family.INET6 ? CTA_IP_V6_DST : CTA_IP_V4_DST);
        if (src == null || dst == null) return null;
        return new Flow(family, proto.u8(CTA_PROTO_NUM, -1), src, dst, proto.be16(CTA_PROTO_SRC_PORT, -1),
                proto.be16(CTA_PROTO_DST_PORT, -1), a.bytes(CTA_TUPLE_ORIG), a.be16(CTA_ZONE, 0));
    }

    private static IpAddr address(NlAttrs ip, int type) {
        byte[] b = ip.bytes(type);
        return b == null || (b.length != 4 && b.length != 16) ? null : new IpAddr(b);
    }
}
