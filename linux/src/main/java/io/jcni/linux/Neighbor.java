package io.jcni.linux;

import io.jcni.types.IpAddr;

/**
 * A neighbour-table entry (static ARP/NDP) or, with family {@link Family#AF_BRIDGE}, a bridge
 * forwarding-database entry such as a VXLAN remote.
 *
 * @param family AF_INET, AF_INET6 or AF_BRIDGE (7)
 * @param address the IP (ARP/NDP) or, for FDB, the remote VTEP (NDA_DST); may be null for FDB
 * @param state NUD_* state
 * @param flags NTF_* flags
 */
public record Neighbor(int index, int family, IpAddr address, MacAddress mac, int state, int flags) {
    public static final int NUD_REACHABLE = 0x02;
    public static final int NUD_STALE = 0x04;
    public static final int NUD_NOARP = 0x40;
    public static final int NUD_PERMANENT = 0x80;

    public static final int NTF_SELF = 0x02;
    public static final int NTF_MASTER = 0x04;

    /** A permanent ARP (IPv4) or NDP (IPv6) entry: {@code ip neigh add IP lladdr MAC dev X nud permanent}. */
    public static Neighbor permanent(int index, IpAddr ip, MacAddress mac) {
        return new Neighbor(index, Family.of(ip).af(), ip, mac, NUD_PERMANENT, 0);
    }

    /** A permanent FDB entry on the device itself: {@code bridge fdb add MAC dev X dst IP self permanent}. */
    public static Neighbor fdb(int index, MacAddress mac, IpAddr dst) {
        return new Neighbor(index, Family.AF_BRIDGE, dst, mac, NUD_PERMANENT, NTF_SELF);
    }

    public boolean isFdb() {
        return family == Family.AF_BRIDGE;
    }

    void encode(NlMessage m) {
        m.u8(family).u8(0).u16(0).u32(index).u16(state).u8(flags).u8(0);
        if (address != null) m.attrAddress(Rtm.NDA_DST, address);
        if (mac != null) m.attr(Rtm.NDA_LLADDR, mac.bytes());
    }

    static Neighbor decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.NDMSG_SIZE);
        return new Neighbor(m.i32(4), m.u8(0), a.address(Rtm.NDA_DST), a.mac(Rtm.NDA_LLADDR), m.u16(8), m.u8(10));
    }
}
