package io.jcni.plugins.ipam.hostlocal;

import java.math.BigInteger;

/**
 * An IPv4 or IPv6 address as a compact value: 128 bits in two longs.
 *
 * <p>Why not {@link java.net.InetAddress}: its parser may fall back to DNS for anything that is
 * not a literal, it has no arithmetic, and its IPv6 text form is not the compressed form the
 * reference plugin uses for file names. Parsing and printing here follow Go's {@code net.ParseIP}
 * and {@code net.IP.String()}, because the on-disk state is keyed by that text:
 * <ul>
 *   <li>IPv4: exactly four decimal fields 0–255, no leading zeros;</li>
 *   <li>IPv6: hex groups of 1–4 digits, at most one {@code ::}, an optional trailing dotted IPv4,
 *       no zone; an IPv4-mapped address ({@code ::ffff:a.b.c.d}) is an IPv4 address, as Go's
 *       {@code To4()} canonicalisation makes it;</li>
 *   <li>IPv6 output is RFC 5952: lowercase, no leading zeros, the first longest run of two or more
 *       zero groups replaced by {@code ::}.</li>
 * </ul>
 * IPv4 addresses keep their 32 bits in the low word; {@code hi} is always 0 for them.
 */
public record IpAddress(boolean v6, long hi, long lo) implements Comparable<IpAddress> {
    private static final long V4_MASK = 0xFFFF_FFFFL;

    public IpAddress {
        if (!v6 && (hi != 0 || (lo & ~V4_MASK) != 0)) {
            throw new IllegalArgumentException("IPv4 address out of 32-bit range");
        }
    }

    public static IpAddress v4(long bits) {
        return new IpAddress(false, 0, bits & V4_MASK);
    }

    public static IpAddress v6(long hi, long lo) {
        return new IpAddress(true, hi, lo);
    }

    /** Parses like Go's {@code net.ParseIP}, failing with the message of Go's text unmarshaller. */
    public static IpAddress parse(String s) {
        IpAddress ip = tryParse(s);
        if (ip == null) throw new IpamException("invalid IP address: " + s);
        return ip;
    }

    /** Parses like Go's {@code net.ParseIP}; {@code null} where Go returns nil. */
    public static IpAddress tryParse(String s) {
        if (s == null) return null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '.') {
                long v = parseV4(s, 0, s.length());
                return v < 0 ? null : v4(v);
            }
            if (c == ':') return parseV6(s);
        }
        return null;
    }

    /** The 32-bit value of a dotted quad in {@code s[from,to)}, or -1. */
    private static long parseV4(String s, int from, int to) {
        long value = 0;
        int fields = 0;
        int i = from;
        while (i <= to) {
            int start = i;
            int field = 0;
            while (i < to && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                field = field * 10 + (s.charAt(i) - '0');
                if (field > 255) return -1;
                i++;
            }
            int digits = i - start;
            if (digits == 0 || (digits > 1 && s.charAt(start) == '0')) return -1;
            value = (value << 8) | field;
            fields++;
            if (i == to) break;
            if (s.charAt(i) != '.' || fields == 4) return -1;
            i++;
        }
        return fields == 4 ? value : -1;
    }

    private static IpAddress parseV6(String s) {
        int[] groups = new int[8];
        int n = 0;
        int ellipsis = -1;
        int i = 0;
        int len = s.length();
        if (len >= 2 && s.charAt(0) == ':' && s.charAt(1) == ':') {
            ellipsis = 0;
            i = 2;
            if (i == len) return fromGroups(groups);
        }
        while (i < len) {
            int start = i;
            int g = 0;
            while (i < len && Character.digit(s.charAt(i), 16) >= 0 && i - start < 5) {
                g = (g << 4) | Character.digit(s.charAt(i), 16);
                i++;
            }
            int digits = i - start;
            if (digits == 0) return null;
            if (i < len && s.charAt(i) == '.') {
                // An embedded IPv4 tail fills the last two groups.
                if (n > 6) return null;
                long v4 = parseV4(s, start, len);
                if (v4 < 0) return null;
                groups[n++] = (int) (v4 >>> 16);
                groups[n++] = (int) (v4 & 0xFFFF);
                i = len;
                break;
            }
            if (digits > 4) return null;
            if (n == 8) return null;
            groups[n++] = g;
            if (i == len) break;
            if (s.charAt(i) != ':') return null;
            i++;
            if (i < len && s.charAt(i) == ':') {
                if (ellipsis >= 0) return null;
                ellipsis = n;
                i++;
                if (i == len) break;
            } else if (i == len) {
                return null; // trailing single colon
            }
        }
        if (ellipsis >= 0) {
            if (n == 8) return null; // "::" must stand for at least one group
            int move = n - ellipsis;
            for (int k = 0; k < move; k++) {
                groups[7 - k] = groups[n - 1 - k];
            }
            for (int k = ellipsis; k < 8 - move; k++) groups[k] = 0;
        } else if (n != 8) {
            return null;
        }
        return fromGroups(groups);
    }

    private static IpAddress fromGroups(int[] g) {
        long hi = ((long) g[0] << 48) | ((long) g[1] << 32) | ((long) g[2] << 16) | g[3];
        long lo = ((long) g[4] << 48) | ((long) g[5] << 32) | ((long) g[6] << 16) | g[7];
        if (hi == 0 && (lo >>> 32) == 0xFFFFL) return v4(lo & V4_MASK); // IPv4-mapped
        return v6(hi, lo);
    }

    public int bitLength() {
        return v6 ? 128 : 32;
    }

    public int family() {
        return v6 ? 6 : 4;
    }

    /** The next address, wrapping to zero after the last one (Go's {@code ip.NextIP} wraps too). */
    public IpAddress next() {
        if (!v6) return v4(lo + 1);
        long nlo = lo + 1;
        return v6(nlo == 0 ? hi + 1 : hi, nlo);
    }

    public IpAddress previous() {
        if (!v6) return v4(lo - 1);
        return v6(lo == 0 ? hi - 1 : hi, lo - 1);
    }

    /** This address with only the first {@code prefix} bits kept. */
    public IpAddress mask(int prefix) {
        if (!v6) return v4(lo & v4Mask(prefix));
        return v6(hi & hiMask(prefix), lo & loMask(prefix));
    }

    /** This address with all bits after the first {@code prefix} set. */
    public IpAddress fillHostBits(int prefix) {
        if (!v6) return v4(lo | (~v4Mask(prefix) & V4_MASK));
        return v6(hi | ~hiMask(prefix), lo | ~loMask(prefix));
    }

    static long v4Mask(int prefix) {
        return prefix == 0 ? 0 : (V4_MASK << (32 - prefix)) & V4_MASK;
    }

    static long hiMask(int prefix) {
        if (prefix >= 64) return -1L;
        return prefix == 0 ? 0 : -1L << (64 - prefix);
    }

    static long loMask(int prefix) {
        if (prefix <= 64) return 0;
        return prefix == 128 ? -1L : -1L << (128 - prefix);
    }

    public BigInteger toBigInteger() {
        BigInteger h = new BigInteger(Long.toUnsignedString(hi));
        return h.shiftLeft(64).add(new BigInteger(Long.toUnsignedString(lo)));
    }

    @Override
    public int compareTo(IpAddress o) {
        if (v6 != o.v6) return v6 ? 1 : -1;
        int c = Long.compareUnsigned(hi, o.hi);
        return c != 0 ? c : Long.compareUnsigned(lo, o.lo);
    }

    /** Go's {@code net.IP.String()}: the text used as the reservation file name. */
    @Override
    public String toString() {
        if (!v6) {
            return ((lo >>> 24) & 0xFF) + "." + ((lo >>> 16) & 0xFF) + "." + ((lo >>> 8) & 0xFF) + "." + (lo & 0xFF);
        }
        int[] g = new int[8];
        for (int k = 0; k < 4; k++) {
            g[k] = (int) ((hi >>> (48 - 16 * k)) & 0xFFFF);
            g[k + 4] = (int) ((lo >>> (48 - 16 * k)) & 0xFFFF);
        }
        int bestStart = -1;
        int bestLen = 0;
        for (int k = 0; k < 8; ) {
            if (g[k] != 0) {
                k++;
                continue;
            }
            int j = k;
            while (j < 8 && g[j] == 0) j++;
            if (j - k >= 2 && j - k > bestLen) {
                bestStart = k;
                bestLen = j - k;
            }
            k = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int k = 0; k < 8; k++) {
            if (k == bestStart) {
                sb.append("::");
                k += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
            sb.append(Integer.toHexString(g[k]));
        }
        return sb.toString();
    }
}
