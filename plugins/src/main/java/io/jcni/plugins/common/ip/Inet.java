package io.jcni.plugins.common.ip;

import io.jcni.linux.IpPrefix;
import io.jcni.spec.Cidr;
import io.jcni.spec.IpAddr;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Conversions between the spec's address types and java.net's, without any name lookup. */
public final class Inet {
    private Inet() {}

    public static InetAddress of(IpAddr ip) {
        try {
            return InetAddress.getByAddress(ip.bytes());
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // 4 or 16 bytes always work
        }
    }

    public static IpAddr ip(InetAddress a) {
        return new IpAddr(a.getAddress());
    }

    /** "10.1.0.5/16" keeping its host bits, as an address is added to an interface. */
    public static IpPrefix prefix(Cidr c) {
        return new IpPrefix(of(c.address()), c.prefix());
    }

    /** A host prefix: /32 or /128. */
    public static IpPrefix host(IpAddr ip) {
        return new IpPrefix(of(ip), ip.bits());
    }

    static boolean isGlobalUnicast(InetAddress a) {
        return !(a.isLoopbackAddress() || a.isLinkLocalAddress() || a.isMulticastAddress() || a.isAnyLocalAddress()
                || isV4Broadcast(a));
    }

    private static boolean isV4Broadcast(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 4 && (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff;
    }
}
