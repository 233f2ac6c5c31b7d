package io.jcni.plugins.ipam.hostlocal;

import java.math.BigInteger;

/**
 * An address with a prefix length, like Go's {@code types.IPNet}: the address is kept as written
 * (host bits included), because the reference plugin keeps it that way too and prints it back in
 * error messages and route results.
 */
public record Cidr(IpAddress address, int prefixLength) {
    public Cidr {
        if (prefixLength < 0 || prefixLength > address.bitLength()) {
            throw new IllegalArgumentException("prefix length " + prefixLength + " out of range");
        }
    }

    /** Parses {@code addr/len} like Go's {@code net.ParseCIDR}, with Go's error text. */
    public static Cidr parse(String s) {
        int slash = s.indexOf('/');
        IpAddress ip = slash < 0 ? null : IpAddress.tryParse(s.substring(0, slash));
        int prefix = slash < 0 ? -1 : parsePrefix(s.substring(slash + 1));
        if (ip == null || prefix < 0 || prefix > mappedAwareBits(s.substring(0, slash), ip)) {
            throw new IpamException("invalid CIDR address: " + s);
        }
        // Go gives an IPv4-mapped IPv6 text a 128-bit mask; it has no sensible IPv4 meaning here.
        if (ip.bitLength() != mappedAwareBits(s.substring(0, slash), ip)) {
            throw new IpamException("IPNet IP and Mask version mismatch");
        }
        return new Cidr(ip, prefix);
    }

    private static int mappedAwareBits(String text, IpAddress ip) {
        return text.indexOf(':') >= 0 ? 128 : ip.bitLength();
    }

    /** Decimal digits only, no sign (Go's {@code dtoi}, which tolerates leading zeros). */
    private static int parsePrefix(String s) {
        if (s.isEmpty() || s.length() > 6) return -1;
        int v = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    public boolean isV6() {
        return address.v6();
    }

    /** The network address (host bits cleared). */
    public IpAddress network() {
        return address.mask(prefixLength);
    }

    /** The last address of the block (host bits set): the IPv4 broadcast address. */
    public IpAddress lastAddress() {
        return address.fillHostBits(prefixLength);
    }

    /** Go's {@code IPNet.Contains}: same family and same network bits. */
    public boolean contains(IpAddress ip) {
        return ip != null && ip.v6() == address.v6() && ip.mask(prefixLength).equals(network());
    }

    /** Number of addresses in the block. */
    public BigInteger size() {
        return BigInteger.ONE.shiftLeft(address.bitLength() - prefixLength);
    }

    /** {@code address/prefix}, the address as written (Go's {@code IPNet.String}). */
    @Override
    public String toString() {
        return address + "/" + prefixLength;
    }
}
