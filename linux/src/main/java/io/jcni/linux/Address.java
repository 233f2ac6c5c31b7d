package io.jcni.linux;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;

/**
 * An interface address (RTM_NEWADDR).
 *
 * @param flags IFA_F_* flags (e.g. {@link #IFA_F_NODAD}, {@link #IFA_F_TENTATIVE})
 */
public record Address(int index, IpAddr address, int prefixLength, int scope, int flags, String label) {
    public static final int IFA_F_SECONDARY = 0x01;
    public static final int IFA_F_NODAD = 0x02;
    public static final int IFA_F_DADFAILED = 0x08;
    public static final int IFA_F_TENTATIVE = 0x40;
    public static final int IFA_F_PERMANENT = 0x80;

    /** The address with its prefix length, host bits kept: "10.1.0.5/16". */
    public Cidr prefix() {
        return new Cidr(address, prefixLength);
    }

    public Family family() {
        return Family.of(address);
    }

    static Address decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.IFADDRMSG_SIZE);
        // IFA_LOCAL is the interface's own address; IFA_ADDRESS differs from it only on point-to-point links.
        IpAddr addr = a.has(Rtm.IFA_LOCAL) ? a.address(Rtm.IFA_LOCAL) : a.address(Rtm.IFA_ADDRESS);
        int flags = a.has(Rtm.IFA_FLAGS) ? a.u32(Rtm.IFA_FLAGS, 0) : m.u8(2);
        return new Address(m.i32(4), addr, m.u8(1), m.u8(3), flags, a.string(Rtm.IFA_LABEL));
    }

    @Override
    public String toString() {
        return "Address[" + prefix() + " dev " + index + " flags 0x" + Integer.toHexString(flags) + "]";
    }
}
