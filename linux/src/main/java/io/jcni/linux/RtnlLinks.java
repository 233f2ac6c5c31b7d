package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@link Rtnl}'s links: creation and deletion, their settings, bridge ports and bridge VLANs. */
final class RtnlLinks {
    private final NetlinkSocket socket;

    RtnlLinks(NetlinkSocket socket) {
        this.socket = socket;
    }

    List<Link> links() {
        List<Link> links = new ArrayList<>();
        for (NlMsg m : socket.dump(ifinfo(Rtm.RTM_GETLINK, 0, 0, 0), "list links")) {
            if (m.type() == Rtm.RTM_NEWLINK) links.add(Link.decode(m));
        }
        return links;
    }

    Link link(String name) {
        NlMessage m = ifinfo(Rtm.RTM_GETLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name);
        return single(socket.request(m, "get link " + name), "get link " + name);
    }

    Link link(int index) {
        return single(socket.request(ifinfo(Rtm.RTM_GETLINK, 0, index, 0), "get link " + index), "get link " + index);
    }

    Optional<VxlanParams> vxlanParams(int index) {
        String op = "get link " + index;
        for (NlMsg m : socket.request(ifinfo(Rtm.RTM_GETLINK, 0, index, 0), op)) {
            if (m.type() == Rtm.RTM_NEWLINK) return Optional.ofNullable(VxlanParams.decode(m));
        }
        throw new ErrnoException(Errno.ENODEV, op, "no link in the reply", null);
    }

    Optional<Link> findLink(String name) {
        try {
            return Optional.of(link(name));
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return Optional.empty();
            throw e;
        }
    }

    LinkInfo linkInfo(String name) {
        NlMessage m = ifinfo(Rtm.RTM_GETLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name);
        for (NlMsg r : socket.request(m, "get link " + name)) if (r.type() == Rtm.RTM_NEWLINK) return LinkInfo.decode(r);
        throw new ErrnoException(Errno.ENODEV, "get link " + name, "no link in the reply", null);
    }

    void addLink(NewLink spec) {
        socket.request(newLinkRequest(spec), "add link " + spec.name());
    }

    /** The RTM_NEWLINK request for {@code spec}, before the socket adds REQUEST|ACK, seq and port id. */
    static NlMessage newLinkRequest(NewLink spec) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
        spec.encode(m);
        return m;
    }

    void addVeth(String name, String peerName, Netns peerNs, int mtu, MacAddress mac) {
        NewLink spec = NewLink.veth(name, peerName).mtu(mtu).mac(mac);
        if (peerNs != null) spec.peerNamespace(peerNs);
        addLink(spec);
    }

    void deleteLink(int index) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, index, 0), "delete link " + index);
    }

    void deleteLink(String name) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name), "delete link " + name);
    }

    void deleteGroup(int group) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrU32(Rtm.IFLA_GROUP, group), "delete link group " + group);
    }

    static void deleteGroupDetached(int group, int delayMillis) {
        ByteBuffer m = ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrU32(Rtm.IFLA_GROUP, group).finish(1, 0);
        m.putShort(6, (short) (NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK));
        byte[] bytes = new byte[m.remaining()];
        m.get(bytes);
        Native.sendDetached(bytes, delayMillis);
    }

    void setGroup(int index, int group) {
        setlink(index, "set link " + index + " group " + group).attrU32(Rtm.IFLA_GROUP, group).send();
    }

    void setUp(int index) {
        setFlag(index, Link.IFF_UP, true, "set link " + index + " up");
    }

    void setDown(int index) {
        setFlag(index, Link.IFF_UP, false, "set link " + index + " down");
    }

    void setPromisc(int index, boolean on) {
        setFlag(index, Link.IFF_PROMISC, on, "set link " + index + " promisc " + (on ? "on" : "off"));
    }

    void setAllmulti(int index, boolean on) {
        setFlag(index, Link.IFF_ALLMULTI, on, "set link " + index + " allmulticast " + (on ? "on" : "off"));
    }

    void setArp(int index, boolean on) {
        NlMessage m = new NlMessage(Rtm.RTM_SETLINK, 0).u8(0).u8(0).u16(0).u32(index)
                .u32(on ? 0 : Link.IFF_NOARP).u32(Link.IFF_NOARP);
        socket.request(m, "set link " + index + " arp " + (on ? "on" : "off"));
    }

    void setMtu(int index, int mtu) {
        setlink(index, "set link " + index + " mtu " + mtu).attrU32(Rtm.IFLA_MTU, mtu).send();
    }

    void setMac(int index, MacAddress mac) {
        setlink(index, "set link " + index + " address " + mac).attr(Rtm.IFLA_ADDRESS, mac.bytes()).send();
    }

    void setTxqlen(int index, int txqlen) {
        setlink(index, "set link " + index + " txqueuelen " + txqlen).attrU32(Rtm.IFLA_TXQLEN, txqlen).send();
    }

    void setAlias(int index, String alias) {
        setlink(index, "set link " + index + " alias").attrString(Rtm.IFLA_IFALIAS, alias).send();
    }

    void setAliasAndGroup(int index, String alias, int group) {
        setlink(index, "set link " + index + " alias and group " + Integer.toUnsignedString(group))
                .attrString(Rtm.IFLA_IFALIAS, alias).attrU32(Rtm.IFLA_GROUP, group).send();
    }

    void rename(int index, String name) {
        setlink(index, "rename link " + index + " to " + name).attrString(Rtm.IFLA_IFNAME, name).send();
    }

    void setMaster(int index, int masterIndex) {
        setlink(index, "set link " + index + " master " + masterIndex).attrU32(Rtm.IFLA_MASTER, masterIndex).send();
    }

    void setNoMaster(int index) {
        setlink(index, "set link " + index + " nomaster").attrU32(Rtm.IFLA_MASTER, 0).send();
    }

    void setNamespace(int index, Netns ns) {
        setNamespaceFd(index, ns.fd());
    }

    void setNamespaceFd(int index, int nsFd) {
        setlink(index, "set link " + index + " netns").attrU32(Rtm.IFLA_NET_NS_FD, nsFd).send();
    }

    void setHairpin(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_MODE, on, "set bridge port " + index + " hairpin");
    }

    void setIsolated(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_ISOLATED, on, "set bridge port " + index + " isolated");
    }

    void setLearning(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_LEARNING, on, "set bridge port " + index + " learning");
    }

    BridgePort bridgePort(int index) {
        for (NlMsg m : socket.dump(ifinfo(Rtm.RTM_GETLINK, Family.AF_BRIDGE, 0, 0), "list bridge ports")) {
            if (m.type() == Rtm.RTM_NEWLINK && m.i32(4) == index) {
                BridgePort p = BridgePort.decode(m);
                if (p.masterIndex() != 0) return p;
            }
        }
        throw new ErrnoException(Errno.ENODEV, "get bridge port " + index, "not a bridge port", null);
    }

    void addBridgeVlan(int index, int vid, boolean pvid, boolean untagged, boolean self) {
        socket.request(bridgeVlanRequest(Rtm.RTM_SETLINK, index, vid, pvid, untagged, self), "add bridge vlan " + vid + " dev " + index);
    }

    void deleteBridgeVlan(int index, int vid, boolean self) {
        socket.request(bridgeVlanRequest(Rtm.RTM_DELLINK, index, vid, false, false, self), "delete bridge vlan " + vid + " dev " + index);
    }

    List<BridgeVlan> bridgeVlans(int index) {
        NlMessage req = ifinfo(Rtm.RTM_GETLINK, Family.AF_BRIDGE, 0, 0).attrU32(Rtm.IFLA_EXT_MASK, Rtm.RTEXT_FILTER_BRVLAN);
        List<BridgeVlan> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list bridge vlans")) {
            if (m.type() != Rtm.RTM_NEWLINK || m.i32(4) != index) continue;
            for (byte[] v : m.attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_AF_SPEC).bytesAll(Rtm.IFLA_BRIDGE_VLAN_INFO)) {
                ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.nativeOrder());
                int flags = Short.toUnsignedInt(b.getShort(0));
                out.add(new BridgeVlan(Short.toUnsignedInt(b.getShort(2)), (flags & Rtm.BRIDGE_VLAN_INFO_PVID) != 0,
                        (flags & Rtm.BRIDGE_VLAN_INFO_UNTAGGED) != 0));
            }
        }
        return out;
    }

    static NlMessage bridgeVlanRequest(int type, int index, int vid, boolean pvid, boolean untagged, boolean self) {
        if (vid < 1 || vid > 4094) throw new IllegalArgumentException("bad VLAN id " + vid);
        NlMessage m = ifinfo(type, Family.AF_BRIDGE, index, 0);
        int spec = m.nest(Rtm.IFLA_AF_SPEC);
        if (self) m.attrU16(Rtm.IFLA_BRIDGE_FLAGS, Rtm.BRIDGE_FLAGS_SELF);
        int flags = (pvid ? Rtm.BRIDGE_VLAN_INFO_PVID : 0) | (untagged ? Rtm.BRIDGE_VLAN_INFO_UNTAGGED : 0);
        ByteBuffer info = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        info.putShort((short) flags).putShort((short) vid);
        m.attr(Rtm.IFLA_BRIDGE_VLAN_INFO, info.array());
        return m.end(spec);
    }

    private void setFlag(int index, int flag, boolean on, String op) {
        NlMessage m = new NlMessage(Rtm.RTM_SETLINK, 0).u8(0).u8(0).u16(0).u32(index).u32(on ? flag : 0).u32(flag);
        socket.request(m, op);
    }

    private void setBridgePortFlag(int index, int attr, boolean on, String op) {
        NlMessage m = ifinfo(Rtm.RTM_SETLINK, Family.AF_BRIDGE, index, 0);
        int nest = m.nest(Rtm.IFLA_PROTINFO | NlMessage.NLA_F_NESTED);
        m.attrU8(attr, on ? 1 : 0);
        m.end(nest);
        socket.request(m, op + (on ? " on" : " off"));
    }

    /** An ifinfomsg request with flags 0 and change mask {@code change}. */
    private static NlMessage ifinfo(int type, int family, int index, int change) {
        return new NlMessage(type, 0).u8(family).u8(0).u16(0).u32(index).u32(0).u32(change);
    }

    private SetLink setlink(int index, String op) {
        return new SetLink(ifinfo(Rtm.RTM_SETLINK, 0, index, 0), op);
    }

    private final class SetLink {
        private final NlMessage m;
        private final String op;

        SetLink(NlMessage m, String op) {
            this.m = m;
            this.op = op;
        }

        SetLink attrU32(int type, int v) {
            m.attrU32(type, v);
            return this;
        }

        SetLink attr(int type, byte[] v) {
            m.attr(type, v);
            return this;
        }

        SetLink attrString(int type, String v) {
            m.attrString(type, v);
            return this;
        }

        void send() {
            socket.request(m, op);
        }
    }

    private static Link single(List<NlMsg> replies, String op) {
        for (NlMsg m : replies) if (m.type() == Rtm.RTM_NEWLINK) return Link.decode(m);
        throw new ErrnoException(Errno.ENODEV, op, "no link in the reply", null);
    }
}
