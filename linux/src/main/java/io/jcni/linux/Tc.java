package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Traffic control over rtnetlink: what the CNI bandwidth plugin needs. A TBF qdisc shapes a
 * link's egress; ingress is shaped by redirecting it (ingress qdisc + u32 match-all filter +
 * mirred egress redirect) to an ifb device that carries its own TBF.
 *
 * <pre>{@code
 * Tc tc = rt.tc();
 * tc.addTbf(hostVeth, TbfParams.forBandwidth(rateBits, burstBits));  // container ingress
 * tc.addIngress(hostVeth);
 * tc.addRedirectFilter(hostVeth, Tc.HANDLE_INGRESS_QDISC, ifb);      // container egress ...
 * tc.addTbf(ifb, TbfParams.forBandwidth(rateBits, burstBits));       // ... shaped on the ifb
 * }</pre>
 */
public final class Tc {
    /** The root of a link's egress qdisc tree (TC_H_ROOT). */
    public static final int HANDLE_ROOT = 0xFFFFFFFF;
    /** Parent of an ingress or clsact qdisc (TC_H_INGRESS == TC_H_CLSACT). */
    public static final int HANDLE_INGRESS = 0xFFFFFFF1;
    /** The ingress qdisc's own handle, ffff:, to which ingress filters attach. */
    public static final int HANDLE_INGRESS_QDISC = 0xFFFF0000;
    /** clsact's ingress and egress hook points, as filter parents. */
    public static final int CLSACT_INGRESS = 0xFFFFFFF2;
    public static final int CLSACT_EGRESS = 0xFFFFFFF3;

    public static final int ETH_P_ALL = 0x0003;
    public static final int ETH_P_IP = 0x0800;

    static final int TCA_KIND = 1;
    static final int TCA_OPTIONS = 2;
    static final int TCA_TBF_PARMS = 1;
    static final int TCA_TBF_RATE64 = 4;
    static final int TCA_U32_CLASSID = 1;
    static final int TCA_U32_SEL = 5;
    static final int TCA_U32_ACT = 7;
    static final int TCA_MATCHALL_ACT = 2;
    static final int TCA_ACT_KIND = 1;
    static final int TCA_ACT_OPTIONS = 2;
    static final int TCA_MIRRED_PARMS = 2;
    static final int TCA_EGRESS_REDIR = 1;
    static final int TC_ACT_STOLEN = 4;
    static final int TC_U32_TERMINAL = 1;
    static final int TC_LINKLAYER_ETHERNET = 1;

    private final NetlinkSocket socket;

    Tc(NetlinkSocket socket) {
        this.socket = socket;
    }

    /** major:minor as one 32-bit handle. */
    public static int handle(int major, int minor) {
        return (major << 16) | (minor & 0xffff);
    }

    /** {@code tc qdisc add dev X root handle 1: tbf ...}. */
    public void addTbf(int index, TbfParams p) {
        NlMessage m = tcmsg(Rtm.RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, index, handle(1, 0), HANDLE_ROOT, 0);
        m.attrString(TCA_KIND, "tbf");
        int opts = m.nest(TCA_OPTIONS);
        long rate32 = Math.min(p.rateBytesPerSecond(), 0xFFFFFFFFL);
        // struct tc_tbf_qopt: rate and peakrate tc_ratespec, then limit, buffer, mtu.
        byte[] qopt = new byte[36];
        ByteBuffer q = ByteBuffer.wrap(qopt).order(ByteOrder.nativeOrder());
        q.put(1, (byte) TC_LINKLAYER_ETHERNET).putInt(8, (int) rate32);
        q.putInt(24, p.limitBytes()).putInt(28, p.bufferTicks());
        m.attr(TCA_TBF_PARMS, qopt);
        if (p.rateBytesPerSecond() >= 1L << 32) m.attrU64(TCA_TBF_RATE64, p.rateBytesPerSecond());
        m.end(opts);
        socket.request(m, "add qdisc tbf dev " + index);
    }

    /** {@code tc qdisc add dev X handle ffff: ingress}. */
    public void addIngress(int index) {
        NlMessage m = tcmsg(Rtm.RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, index, HANDLE_INGRESS_QDISC, HANDLE_INGRESS, 0);
        m.attrString(TCA_KIND, "ingress");
        socket.request(m, "add qdisc ingress dev " + index);
    }

    /** {@code tc qdisc add dev X clsact}: filters then attach to {@link #CLSACT_INGRESS} or {@link #CLSACT_EGRESS}. */
    public void addClsact(int index) {
        NlMessage m = tcmsg(Rtm.RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, index, HANDLE_INGRESS_QDISC, HANDLE_INGRESS, 0);
        m.attrString(TCA_KIND, "clsact");
        socket.request(m, "add qdisc clsact dev " + index);
    }

    /** Deletes the qdisc attached at {@code parent} (e.g. {@link #HANDLE_ROOT}, {@link #HANDLE_INGRESS}). */
    public void deleteQdisc(int index, int parent) {
        int h = parent == HANDLE_INGRESS ? HANDLE_INGRESS_QDISC : 0;
        socket.request(tcmsg(Rtm.RTM_DELQDISC, 0, index, h, parent, 0), "delete qdisc dev " + index + " parent " + hex(parent));
    }

    /**
     * The bandwidth plugin's redirect: {@code tc filter add dev X parent P protocol all prio 1 u32
     * match u32 0 0 flowid 1:1 action mirred egress redirect dev TARGET}.
     */
    public void addRedirectFilter(int index, int parent, int targetIndex) {
        NlMessage m = tcmsg(Rtm.RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, index, 0, parent, filterInfo(1, ETH_P_ALL));
        m.attrString(TCA_KIND, "u32");
        int opts = m.nest(TCA_OPTIONS);
        m.attrU32(TCA_U32_CLASSID, handle(1, 1));
        // struct tc_u32_sel (16 bytes) with one all-zero tc_u32_key (16 bytes): matches every packet.
        byte[] sel = new byte[32];
        sel[0] = TC_U32_TERMINAL;
        sel[2] = 1;
        m.attr(TCA_U32_SEL, sel);
        mirredRedirect(m, TCA_U32_ACT, targetIndex);
        m.end(opts);
        socket.request(m, "add filter u32 dev " + index + " redirect to " + targetIndex);
    }

    /** The same redirect with the simpler matchall classifier (kernel 4.8+). */
    public void addMatchallRedirect(int index, int parent, int targetIndex) {
        NlMessage m = tcmsg(Rtm.RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, index, 0, parent, filterInfo(1, ETH_P_ALL));
        m.attrString(TCA_KIND, "matchall");
        int opts = m.nest(TCA_OPTIONS);
        mirredRedirect(m, TCA_MATCHALL_ACT, targetIndex);
        m.end(opts);
        socket.request(m, "add filter matchall dev " + index + " redirect to " + targetIndex);
    }

    public List<Qdisc> qdiscs(int index) {
        List<Qdisc> out = new ArrayList<>();
        for (NlMsg msg : socket.dump(tcmsg(Rtm.RTM_GETQDISC, 0, 0, 0, 0, 0), "list qdiscs")) {
            if (msg.type() != Rtm.RTM_NEWQDISC) continue;
            Qdisc q = Qdisc.decode(msg);
            if (index == 0 || q.index() == index) out.add(q);
        }
        return out;
    }

    /** Filters attached at {@code parent} of link {@code index}. */
    public List<Filter> filters(int index, int parent) {
        List<Filter> out = new ArrayList<>();
        for (NlMsg msg : socket.dump(tcmsg(Rtm.RTM_GETTFILTER, 0, index, 0, parent, 0), "list filters dev " + index)) {
            if (msg.type() == Rtm.RTM_NEWTFILTER) out.add(Filter.decode(msg));
        }
        return out;
    }

    private static void mirredRedirect(NlMessage m, int actAttr, int targetIndex) {
        int acts = m.nest(actAttr);
        int first = m.nest(1); // actions are an array ordered by attribute type, starting at 1
        m.attrString(TCA_ACT_KIND, "mirred");
        int aopts = m.nest(TCA_ACT_OPTIONS);
        // struct tc_mirred: tc_gen (index, capab, action, refcnt, bindcnt), eaction, ifindex.
        byte[] parms = new byte[28];
        ByteBuffer p = ByteBuffer.wrap(parms).order(ByteOrder.nativeOrder());
        p.putInt(8, TC_ACT_STOLEN).putInt(20, TCA_EGRESS_REDIR).putInt(24, targetIndex);
        m.attr(TCA_MIRRED_PARMS, parms);
        m.end(aopts).end(first).end(acts);
    }

    /** tcm_info of a filter: priority in the upper half, protocol (network order) in the lower. */
    static int filterInfo(int priority, int ethProtocol) {
        int be = ((ethProtocol & 0xff) << 8) | ((ethProtocol >> 8) & 0xff);
        return (priority << 16) | be;
    }

    private static NlMessage tcmsg(int type, int flags, int index, int handle, int parent, int info) {
        return new NlMessage(type, flags).u8(0).u8(0).u16(0).u32(index).u32(handle).u32(parent).u32(info);
    }

    static String hex(int handle) {
        return Integer.toHexString(handle >>> 16) + ":" + Integer.toHexString(handle & 0xffff);
    }

    /** A qdisc as dumped; {@code tbf} is set for TBF qdiscs. */
    public record Qdisc(int index, String kind, int handle, int parent, TbfParams tbf) {
        static Qdisc decode(NlMsg m) {
            NlAttrs a = m.attrs(Rtm.TCMSG_SIZE);
            String kind = a.string(TCA_KIND);
            TbfParams tbf = null;
            if ("tbf".equals(kind)) {
                NlAttrs o = a.nested(TCA_OPTIONS);
                int off = o.offset(TCA_TBF_PARMS);
                if (off >= 0 && o.length(TCA_TBF_PARMS) >= 36) {
                    var b = o.buffer();
                    long rate = Integer.toUnsignedLong(b.getInt(off + 8));
                    rate = o.u64(TCA_TBF_RATE64, rate);
                    tbf = new TbfParams(rate, b.getInt(off + 28), b.getInt(off + 24));
                }
            }
            return new Qdisc(m.i32(4), kind, m.i32(8), m.i32(12), tbf);
        }
    }

    /**
     * A classifier as dumped.
     *
     * @param redirectIndex the mirred egress-redirect target, 0 if none
     * @param protocol the EtherType in host order
     */
    public record Filter(int index, String kind, int handle, int parent, int priority, int protocol, int redirectIndex) {
        static Filter decode(NlMsg m) {
            NlAttrs a = m.attrs(Rtm.TCMSG_SIZE);
            String kind = a.string(TCA_KIND);
            int info = m.i32(16);
            int be = info & 0xffff;
            int redirect = 0;
            NlAttrs opts = a.nested(TCA_OPTIONS);
            int actAttr = "matchall".equals(kind) ? TCA_MATCHALL_ACT : TCA_U32_ACT;
            for (NlAttrs act : opts.nested(actAttr).nestedAll()) {
                if (!"mirred".equals(act.string(TCA_ACT_KIND))) continue;
                NlAttrs ao = act.nested(TCA_ACT_OPTIONS);
                int off = ao.offset(TCA_MIRRED_PARMS);
                if (off >= 0 && ao.length(TCA_MIRRED_PARMS) >= 28) redirect = ao.buffer().getInt(off + 24);
            }
            return new Filter(m.i32(4), kind, m.i32(8), m.i32(12), info >>> 16, ((be & 0xff) << 8) | (be >> 8), redirect);
        }
    }
}
