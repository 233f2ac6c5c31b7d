package io.jcni.linux;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** An address with a prefix length, e.g. 10.1.2.3/24 or fd00::/64; the address is kept as given. */
public record IpPrefix(InetAddress address, int length) {

    public IpPrefix {
        int max = address instanceof Inet4Address ? 32 : 128;
        if (length < 0 || length > max) throw new IllegalArgumentException("bad prefix length " + length + " for " + address);
    }

    /** Parses "10.1.2.0/24" or "fd00::1/64"; a bare address gets a host-length prefix. Never resolves names. */
    public static IpPrefix parse(String s) {
        int slash = s.indexOf('/');
        InetAddress a = literal(slash < 0 ? s : s.substring(0, slash));
        int len = slash < 0 ? (a instanceof Inet4Address ? 32 : 128) : Integer.parseInt(s.substring(slash + 1));
        return new IpPrefix(a, len);
    }

    /** Parses an IPv4 or IPv6 literal without any DNS lookup. */
    public static InetAddress literal(String s) {
        String t = s.trim();
        boolean plausible = !t.isEmpty() && (t.indexOf(':') >= 0 || t.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9')));
        if (!plausible) throw new IllegalArgumentException("not an IP address: " + s);
        try {
            return InetAddress.getByName(t);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + s, e);
        }
    }

    public boolean isIpv4() {
        return address instanceof Inet4Address;
    }

    /** The network address (host bits cleared). */
    public IpPrefix network() {
        byte[] b = address.getAddress();
        for (int i = 0; i < b.length; i++) {
            int bits = Math.max(0, Math.min(8, length - i * 8));
            b[i] &= (byte) (0xff00 >> bits);
        }
        try {
            return new IpPrefix(InetAddress.getByAddress(b), length);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public String toString() {
        return address.getHostAddress() + "/" + length;
    }
}
