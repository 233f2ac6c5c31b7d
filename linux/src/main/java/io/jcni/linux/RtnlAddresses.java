package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;

/** {@link Rtnl}'s addresses: adding, deleting, listing and waiting out duplicate address detection. */
final class RtnlAddresses {
    private final NetlinkSocket socket;

    RtnlAddresses(NetlinkSocket socket) {
        this.socket = socket;
    }

    void addAddress(int index, IpAddr address, int prefixLength, boolean nodad) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
        encodeAddress(m, index, address, prefixLength, nodad ? Address.IFA_F_NODAD : 0);
        socket.request(m, "add address " + address + "/" + prefixLength + " dev " + index);
    }

    void addAddress(int index, Cidr prefix) {
        addAddress(index, prefix.address(), prefix.prefix(), false);
    }

    void deleteAddress(int index, IpAddr address, int prefixLength) {
        NlMessage m = new NlMessage(Rtm.RTM_DELADDR, 0);
        encodeAddress(m, index, address, prefixLength, 0);
        socket.request(m, "delete address " + address + "/" + prefixLength + " dev " + index);
    }

    List<Address> addresses(int index, Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETADDR, 0).u8(family.af()).u8(0).u8(0).u8(0).u32(0);
        List<Address> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list addresses")) {
            if (m.type() != Rtm.RTM_NEWADDR) continue;
            Address a = Address.decode(m);
            if ((index == 0 || a.index() == index) && a.address() != null) out.add(a);
        }
        return out;
    }

    void settleAddresses(int index, long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            boolean tentative = false;
            for (Address a : addresses(index, Family.INET6)) {
                if ((a.flags() & Address.IFA_F_DADFAILED) != 0) {
                    throw new ErrnoException(Errno.EADDRNOTAVAIL, "settle addresses dev " + index,
                            "duplicate address detection failed for " + a.prefix(), null);
                }
                tentative |= (a.flags() & Address.IFA_F_TENTATIVE) != 0;
            }
            if (!tentative) return;
            if (System.nanoTime() - deadline > 0) {
                throw new ErrnoException(Errno.ETIMEDOUT, "settle addresses dev " + index,
                        "still tentative after " + timeoutMillis + " ms", null);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ErrnoException(Errno.EINTR, "settle addresses dev " + index, null, e);
            }
        }
    }

    private static void encodeAddress(NlMessage m, int index, IpAddr address, int prefixLength, int flags) {
        Family family = Family.of(address);
        m.u8(family.af()).u8(prefixLength).u8(flags & 0xff).u8(0).u32(index);
        m.attrAddress(Rtm.IFA_LOCAL, address);
        m.attrAddress(Rtm.IFA_ADDRESS, address);
        if (flags != 0) m.attrU32(Rtm.IFA_FLAGS, flags);
        if (!address.isV6() && prefixLength < 31) {
            m.attrAddress(Rtm.IFA_BROADCAST, broadcast(address, prefixLength));
        }
    }

    /** The IPv4 broadcast address of {@code v4}'s subnet: its host bits set. */
    static IpAddr broadcast(IpAddr v4, int prefixLength) {
        return new Cidr(v4, prefixLength).last();
    }
}
