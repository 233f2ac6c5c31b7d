package io.jcni.linux;

import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;

/**
 * What {@link Rtnl#addLink} creates: a kind-specific factory, then optional settings.
 *
 * <pre>{@code
 * rt.addLink(NewLink.veth("eth0", "veth1a2b").peerNamespace(hostNs).mtu(1500));
 * rt.addLink(NewLink.vxlan("vx0", 42).vxlanLocal(ip).vxlanPort(4789).vxlanLearning(false));
 * }</pre>
 */
public final class NewLink {
    private final String name;
    private final String kind;
    private int mtu;
    private MacAddress mac;
    private int txqlen = -1;
    private int master;
    private boolean up;
    private int nsFd = -1;
    private boolean hasGroup;
    private int group;

    private String peerName;
    private int peerNsFd = -1;
    private int peerMtu;
    private MacAddress peerMac;

    private int parentIndex;
    private MacvlanMode macvlanMode;
    private int macvlanBcQueueLen;
    private IpvlanMode ipvlanMode;
    private int vlanId = -1;

    private Boolean vlanFiltering;

    private int vni = -1;
    private IpAddr vxlanLocal;
    private IpAddr vxlanGroup;
    private int vxlanPort;
    private int vxlanDev;
    private Boolean vxlanLearning;
    private int vxlanTtl = -1;
    private boolean vxlanGbp;
    private boolean vxlanProxy;

    private NewLink(String name, String kind) {
        this.name = checkName(name);
        this.kind = kind;
    }

    /** Interface names are at most 15 bytes (IFNAMSIZ - 1); failing here beats a kernel EINVAL. */
    private static String checkName(String name) {
        boolean ok = name != null && !name.isEmpty() && name.length() <= 15;
        for (int i = 0; ok && i < name.length(); i++) {
            char c = name.charAt(i);
            ok = c > ' ' && c != '/' && c != ':' && c < 0x7f;
        }
        if (!ok) throw new IllegalArgumentException("bad interface name: " + name);
        return name;
    }

    /** A veth pair; without {@link #peerNamespace} both ends are created here. */
    public static NewLink veth(String name, String peerName) {
        NewLink l = new NewLink(name, "veth");
        l.peerName = checkName(peerName);
        return l;
    }

    public static NewLink bridge(String name) {
        return new NewLink(name, "bridge");
    }

    public static NewLink macvlan(String name, int parentIndex, MacvlanMode mode) {
        NewLink l = new NewLink(name, "macvlan");
        l.parentIndex = parentIndex;
        l.macvlanMode = mode;
        return l;
    }

    /** An ipvlan on {@code parentIndex} (kernel module ipvlan). */
    public static NewLink ipvlan(String name, int parentIndex, IpvlanMode mode) {
        NewLink l = new NewLink(name, "ipvlan");
        l.parentIndex = parentIndex;
        l.ipvlanMode = mode;
        return l;
    }

    /** An 802.1Q VLAN {@code vlanId} (0..4094) on {@code parentIndex} (kernel module 8021q). */
    public static NewLink vlan(String name, int parentIndex, int vlanId) {
        if (vlanId < 0 || vlanId > 4094) throw new IllegalArgumentException("bad VLAN id " + vlanId);
        NewLink l = new NewLink(name, "vlan");
        l.parentIndex = parentIndex;
        l.vlanId = vlanId;
        return l;
    }

    /** A dummy interface (kernel module dummy). */
    public static NewLink dummy(String name) {
        return new NewLink(name, "dummy");
    }

    public static NewLink vxlan(String name, int vni) {
        NewLink l = new NewLink(name, "vxlan");
        l.vni = vni;
        return l;
    }

    public static NewLink ifb(String name) {
        return new NewLink(name, "ifb");
    }

    /** Any kind that needs no IFLA_INFO_DATA, e.g. "dummy" where that module exists. */
    public static NewLink ofKind(String name, String kind) {
        return new NewLink(name, kind);
    }

    public String name() {
        return name;
    }

    public String kind() {
        return kind;
    }

    /** MTU; for a veth also the peer's unless {@link #peerMtu} is set. */
    public NewLink mtu(int mtu) {
        this.mtu = mtu;
        return this;
    }

    public NewLink mac(MacAddress mac) {
        this.mac = mac;
        return this;
    }

    public NewLink txqlen(int txqlen) {
        this.txqlen = txqlen;
        return this;
    }

    public NewLink master(int masterIndex) {
        this.master = masterIndex;
        return this;
    }

    /**
     * The device group the link is born in (IFLA_GROUP, a u32; 0 is the default group). The kernel
     * takes it at creation, unlike IFLA_IFALIAS, so a mark put here exists from the link's first
     * moment: no kill can leave the link without it. Only this end of a veth pair is marked.
     */
    public NewLink group(int group) {
        this.hasGroup = true;
        this.group = group;
        return this;
    }

    /** Created administratively up. */
    public NewLink up() {
        this.up = true;
        return this;
    }

    /** Created directly in {@code ns} (e.g. a macvlan on a host parent, born in the container). */
    public NewLink namespace(Netns ns) {
        return namespaceFd(ns.fd());
    }

    public NewLink namespaceFd(int fd) {
        this.nsFd = fd;
        return this;
    }

    public NewLink peerNamespace(Netns ns) {
        return peerNamespaceFd(ns.fd());
    }

    public NewLink peerNamespaceFd(int fd) {
        requireKind("veth");
        this.peerNsFd = fd;
        return this;
    }

    public NewLink peerMtu(int mtu) {
        requireKind("veth");
        this.peerMtu = mtu;
        return this;
    }

    public NewLink peerMac(MacAddress mac) {
        requireKind("veth");
        this.peerMac = mac;
        return this;
    }

    /** The macvlan's broadcast queue length (IFLA_MACVLAN_BC_QUEUE_LEN); 0 leaves the kernel's. */
    public NewLink macvlanBcQueueLen(int len) {
        requireKind("macvlan");
        this.macvlanBcQueueLen = len;
        return this;
    }

    /** Bridge VLAN filtering (the bridge plugin's "vlan" options need it on). */
    public NewLink vlanFiltering(boolean on) {
        requireKind("bridge");
        this.vlanFiltering = on;
        return this;
    }

    public NewLink vxlanLocal(IpAddr local) {
        requireKind("vxlan");
        this.vxlanLocal = local;
        return this;
    }

    public NewLink vxlanGroup(IpAddr group) {
        requireKind("vxlan");
        this.vxlanGroup = group;
        return this;
    }

    /** UDP destination port; the kernel default is 8472, IANA's is 4789. */
    public NewLink vxlanPort(int port) {
        requireKind("vxlan");
        this.vxlanPort = port;
        return this;
    }

    /** The underlay device index. */
    public NewLink vxlanDev(int index) {
        requireKind("vxlan");
        this.vxlanDev = index;
        return this;
    }

    public NewLink vxlanLearning(boolean learning) {
        requireKind("vxlan");
        this.vxlanLearning = learning;
        return this;
    }

    /** VXLAN Group Based Policy extension (IFLA_VXLAN_GBP, {@code ip link ... gbp}): the header carries the sender's policy group. */
    public NewLink vxlanGbp(boolean gbp) {
        requireKind("vxlan");
        this.vxlanGbp = gbp;
        return this;
    }

    /**
     * ARP/NDP proxy (IFLA_VXLAN_PROXY, {@code ip link ... proxy}): the device answers neighbour
     * requests from its own neighbour table instead of sending them to other VTEPs, so an L2
     * segment needs no flooding (Docker's overlay driver does the same).
     */
    public NewLink vxlanProxy(boolean proxy) {
        requireKind("vxlan");
        this.vxlanProxy = proxy;
        return this;
    }

    public NewLink vxlanTtl(int ttl) {
        requireKind("vxlan");
        this.vxlanTtl = ttl;
        return this;
    }

    private void requireKind(String k) {
        if (!kind.equals(k)) throw new IllegalStateException(k + " option on a " + kind + " link");
    }

    /**
     * The RTM_NEWLINK request body: ifinfomsg and attributes, in the order and form iproute2's
     * {@code ip link add} sends them (the settings, IFLA_GROUP, IFLA_MASTER, IFLA_LINK, IFLA_IFNAME,
     * then IFLA_LINKINFO whose kind has no NUL; iproute2 adds the settings in the order of its
     * arguments), so that NewLinkFixturesTest can compare with its captured requests byte for byte.
     * The kernel itself does not care about the order (nla_parse indexes by type).
     */
    void encode(NlMessage m) {
        m.u8(0).u8(0).u16(0).u32(0).u32(up ? Link.IFF_UP : 0).u32(up ? Link.IFF_UP : 0);
        common(m, mtu, mac, nsFd);
        if (hasGroup) m.attrU32(Rtm.IFLA_GROUP, group);
        if (master > 0) m.attrU32(Rtm.IFLA_MASTER, master);
        if (parentIndex > 0) m.attrU32(Rtm.IFLA_LINK, parentIndex);
        m.attrString(Rtm.IFLA_IFNAME, name);
        int info = m.nest(Rtm.IFLA_LINKINFO);
        m.attr(Rtm.IFLA_INFO_KIND, kind.getBytes(StandardCharsets.US_ASCII));
        infoData(m);
        m.end(info);
    }

    /** IFLA_LINKINFO's kind-specific part: the veth peer, or the kind's settings in IFLA_INFO_DATA. */
    private void infoData(NlMessage m) {
        switch (kind) {
            case "veth" -> {
                int data = m.nest(Rtm.IFLA_INFO_DATA);
                int peer = m.nest(Rtm.VETH_INFO_PEER);
                m.u8(0).u8(0).u16(0).u32(0).u32(0).u32(0); // the peer's own ifinfomsg
                common(m, peerMtu > 0 ? peerMtu : mtu, peerMac, peerNsFd);
                m.attrString(Rtm.IFLA_IFNAME, peerName);
                m.end(peer).end(data);
            }
            case "bridge" -> {
                if (vlanFiltering != null) {
                    int data = m.nest(Rtm.IFLA_INFO_DATA);
                    m.attrU8(Rtm.IFLA_BR_VLAN_FILTERING, vlanFiltering ? 1 : 0);
                    m.end(data);
                }
            }
            // ofKind("x", kind) sends the kind alone, without IFLA_INFO_DATA (jcni doctor's probe).
            case "macvlan" -> {
                if (macvlanMode == null) break;
                int data = m.nest(Rtm.IFLA_INFO_DATA);
                m.attrU32(Rtm.IFLA_MACVLAN_MODE, macvlanMode.value);
                if (macvlanBcQueueLen > 0) m.attrU32(Rtm.IFLA_MACVLAN_BC_QUEUE_LEN, macvlanBcQueueLen);
                m.end(data);
            }
            case "ipvlan" -> {
                if (ipvlanMode == null) break;
                int data = m.nest(Rtm.IFLA_INFO_DATA);
                m.attrU16(Rtm.IFLA_IPVLAN_MODE, ipvlanMode.value);
                m.attrU16(Rtm.IFLA_IPVLAN_FLAGS, 0); // bridge (not private/vepa), as iproute2 and Go's netlink send
                m.end(data);
            }
            case "vlan" -> {
                if (vlanId < 0) break;
                int data = m.nest(Rtm.IFLA_INFO_DATA);
                m.attrU16(Rtm.IFLA_VLAN_ID, vlanId);
                m.end(data);
            }
            case "vxlan" -> vxlanData(m);
            default -> { }
        }
    }

    /** The vxlan kind's IFLA_INFO_DATA: the VNI, then each setting that was given. */
    private void vxlanData(NlMessage m) {
        int data = m.nest(Rtm.IFLA_INFO_DATA);
        m.attrU32(Rtm.IFLA_VXLAN_ID, vni);
        if (vxlanLocal != null) {
            m.attrAddress(!vxlanLocal.isV6() ? Rtm.IFLA_VXLAN_LOCAL : Rtm.IFLA_VXLAN_LOCAL6, vxlanLocal);
        }
        if (vxlanGroup != null) {
            m.attrAddress(!vxlanGroup.isV6() ? Rtm.IFLA_VXLAN_GROUP : Rtm.IFLA_VXLAN_GROUP6, vxlanGroup);
        }
        if (vxlanDev > 0) m.attrU32(Rtm.IFLA_VXLAN_LINK, vxlanDev);
        if (vxlanPort > 0) m.attrBe16(Rtm.IFLA_VXLAN_PORT, vxlanPort);
        if (vxlanLearning != null) m.attrU8(Rtm.IFLA_VXLAN_LEARNING, vxlanLearning ? 1 : 0);
        if (vxlanTtl >= 0) m.attrU8(Rtm.IFLA_VXLAN_TTL, vxlanTtl);
        if (vxlanGbp) m.attrFlag(Rtm.IFLA_VXLAN_GBP);
        if (vxlanProxy) m.attrU8(Rtm.IFLA_VXLAN_PROXY, 1);
        m.end(data);
    }

    private void common(NlMessage m, int mtuValue, MacAddress macValue, int fd) {
        if (mtuValue > 0) m.attrU32(Rtm.IFLA_MTU, mtuValue);
        if (macValue != null) m.attr(Rtm.IFLA_ADDRESS, macValue.bytes());
        if (txqlen >= 0) m.attrU32(Rtm.IFLA_TXQLEN, txqlen);
        if (fd >= 0) m.attrU32(Rtm.IFLA_NET_NS_FD, fd);
    }
}
