package io.jcni.linux;

/**
 * A network interface as the kernel reports it (RTM_NEWLINK).
 *
 * @param kind IFLA_INFO_KIND ("veth", "bridge", "macvlan", ...) or null for plain devices such as lo
 * @param flags the IFF_* flags
 * @param masterIndex the bridge (or other master) this link is enslaved to, 0 if none
 * @param linkIndex IFLA_LINK: for a veth its peer's index (in the peer's namespace), for a
 *     macvlan its parent; 0 if none
 * @param linkNetnsId the peer namespace's id as seen from this namespace, -1 if the peer is local
 * @param slaveKind IFLA_INFO_SLAVE_KIND ("bridge" for a bridge port) or null
 * @param group IFLA_GROUP, the device group (0 is the default group)
 */
public record Link(int index, String name, String kind, int flags, int mtu, MacAddress mac, int masterIndex,
                   int txqlen, int linkIndex, int linkNetnsId, String alias, int operState, String slaveKind,
                   int group) {
    public static final int IFF_UP = 0x1;
    public static final int IFF_BROADCAST = 0x2;
    public static final int IFF_LOOPBACK = 0x8;
    public static final int IFF_POINTOPOINT = 0x10;
    public static final int IFF_RUNNING = 0x40;
    public static final int IFF_NOARP = 0x80;
    public static final int IFF_PROMISC = 0x100;
    public static final int IFF_ALLMULTI = 0x200;
    public static final int IFF_MULTICAST = 0x1000;
    public static final int IFF_LOWER_UP = 0x10000;

    /** IF_OPER_UP in {@link #operState}. */
    public static final int OPER_UP = 6;

    public boolean up() {
        return (flags & IFF_UP) != 0;
    }

    public boolean promisc() {
        return (flags & IFF_PROMISC) != 0;
    }

    public boolean allmulti() {
        return (flags & IFF_ALLMULTI) != 0;
    }

    public boolean loopback() {
        return (flags & IFF_LOOPBACK) != 0;
    }

    static Link decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.IFINFOMSG_SIZE);
        NlAttrs info = a.nested(Rtm.IFLA_LINKINFO);
        return new Link(m.i32(4), a.string(Rtm.IFLA_IFNAME), info.string(Rtm.IFLA_INFO_KIND), m.i32(8),
                a.u32(Rtm.IFLA_MTU, 0), a.mac(Rtm.IFLA_ADDRESS), a.u32(Rtm.IFLA_MASTER, 0),
                a.u32(Rtm.IFLA_TXQLEN, 0), a.u32(Rtm.IFLA_LINK, 0), a.u32(Rtm.IFLA_LINK_NETNSID, -1),
                a.string(Rtm.IFLA_IFALIAS), a.u8(Rtm.IFLA_OPERSTATE, 0), info.string(Rtm.IFLA_INFO_SLAVE_KIND),
                a.u32(Rtm.IFLA_GROUP, 0));
    }
}
