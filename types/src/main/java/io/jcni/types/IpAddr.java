package io.jcni.types;

import java.math.BigInteger;
import java.util.Arrays;

/**
 * An IPv4 or IPv6 address as bytes, parsed strictly from its literal form and printed as Go's
 * net.IP does (RFC 5952 for IPv6), because file names and result JSON must match the reference
 * plugins byte for byte. Unlike {@code InetAddress.getByName}, parsing never touches DNS.
 */
public record IpAddr(byte[] bytes) implements Comparable<IpAddr> {

    public IpAddr {
        if (bytes.length != 4 && bytes.length != 16) throw new IllegalArgumentException("address must be 4 or 16 bytes");
        bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    public boolean isV6() {
        return bytes.length == 16;
    }

    public int bits() {
        return bytes.length * 8;
    }

    /** Parses a literal; IPv4-mapped IPv6 ("::ffff:1.2.3.4") becomes IPv4 as in Go. */
    public static IpAddr parse(String s) {
        IpAddr a = tryParse(s);
        if (a == null) throw new IllegalArgumentException("invalid IP address \"" + s + "\"");
        return a;
    }

    public static IpAddr tryParse(String s) {
        if (s == null || s.isEmpty()) return null;
        byte[] b = s.indexOf(':') >= 0 ? parse6(s) : parse4(s);
        if (b == null) return null;
        if (b.length == 16 && isV4Mapped(b)) b = Arrays.copyOfRange(b, 12, 16);
        return new IpAddr(b);
    }

    public BigInteger toBigInteger() {
        return new BigInteger(1, bytes);
    }

    public static IpAddr fromBigInteger(BigInteger v, boolean v6) {
        int len = v6 ? 16 : 4;
        if (v.signum() < 0 || v.bitLength() > len * 8) throw new IllegalArgumentException("address out of range");
        byte[] raw = v.toByteArray();
        byte[] out = new byte[len];
        int copy = Math.min(raw.length, len);
        System.arraycopy(raw, raw.length - copy, out, len - copy, copy);
        return new IpAddr(out);
    }

    /** This address plus {@code n} (may be negative); fails past the ends of the address space. */
    public IpAddr add(long n) {
        return fromBigInteger(toBigInteger().add(BigInteger.valueOf(n)), isV6());
    }

    /**
     * The next address, wrapping from the last address of the family to the first (as a
     * fixed-width counter). Cheap: a byte-wise increment, no BigInteger, for allocation loops.
     */
    public IpAddr next() {
        byte[] b = bytes.clone();
        for (int i = b.length - 1; i >= 0; i--) {
            if (++b[i] != 0) break;
        }
        return new IpAddr(b);
    }

    /** The previous address, wrapping from the first address of the family to the last. */
    public IpAddr previous() {
        byte[] b = bytes.clone();
        for (int i = b.length - 1; i >= 0; i--) {
            if (b[i]-- != 0) break;
        }
        return new IpAddr(b);
    }

    /** 127.0.0.0/8 or ::1, as Go's {@code IsLoopback} (an IPv4-mapped address counts as IPv4). */
    public boolean isLoopback() {
        byte[] v4 = v4();
        if (v4 != null) return v4[0] == 127;
        for (int i = 0; i < 15; i++) if (bytes[i] != 0) return false;
        return bytes[15] == 1;
    }

    /** 169.254.0.0/16 or fe80::/10, as Go's {@code IsLinkLocalUnicast}. */
    public boolean isLinkLocalUnicast() {
        byte[] v4 = v4();
        if (v4 != null) return (v4[0] & 0xff) == 169 && (v4[1] & 0xff) == 254;
        return (bytes[0] & 0xff) == 0xfe && (bytes[1] & 0xc0) == 0x80;
    }

    /** The four IPv4 bytes of an IPv4 or IPv4-mapped address, else null. Shares this record's array: read only. */
    private byte[] v4() {
        if (bytes.length == 4) return bytes;
        return isV4Mapped(bytes) ? Arrays.copyOfRange(bytes, 12, 16) : null;
    }

    @Override
    public String toString() {
        return isV6() ? format6(bytes) : (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpAddr other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public int compareTo(IpAddr o) {
        if (bytes.length != o.bytes.length) return Integer.compare(bytes.length, o.bytes.length);
        return Arrays.compareUnsigned(bytes, o.bytes);
    }

    private static boolean isV4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) if (b[i] != 0) return false;
        return (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    }

    private static byte[] parse4(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) return null;
        byte[] out = new byte[4];
        for (int i = 0; i < 4; i++) {
            String p = parts[i];
            if (p.isEmpty() || p.length() > 3) return null;
            if (p.length() > 1 && p.charAt(0) == '0') return null; // Go rejects leading zeros (octal ambiguity)
            int v = 0;
            for (int j = 0; j < p.length(); j++) {
                char c = p.charAt(j);
                if (c < '0' || c > '9') return null;
                v = v * 10 + (c - '0');
            }
            if (v > 255) return null;
            out[i] = (byte) v;
        }
        return out;
    }

    private static byte[] parse6(String s) {
        if (s.indexOf('%') >= 0) return null; // zones are not addresses
        byte[] out = new byte[16];
        int dbl = s.indexOf("::");
        if (dbl >= 0 && s.indexOf("::", dbl + 1) >= 0) return null;
        String head = dbl >= 0 ? s.substring(0, dbl) : s;
        String tail = dbl >= 0 ? s.substring(dbl + 2) : "";
        byte[] h = groups(head, dbl < 0);
        byte[] t = groups(tail, true);
        if (h == null || t == null) return null;
        if (dbl < 0) {
            if (h.length != 16) return null;
            return h;
        }
        if (h.length + t.length > 14) return null;
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(t, 0, out, 16 - t.length, t.length);
        return out;
    }

    /** Colon-separated hex groups, the last one may be a dotted IPv4 when {@code allowV4}. */
    private static byte[] groups(String s, boolean allowV4) {
        if (s.isEmpty()) return new byte[0];
        String[] parts = s.split(":", -1);
        byte[] out = new byte[parts.length * 2 + 2];
        int n = 0;
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (i == parts.length - 1 && allowV4 && p.indexOf('.') >= 0) {
                byte[] v4 = parse4(p);
                if (v4 == null) return null;
                System.arraycopy(v4, 0, out, n, 4);
                n += 4;
                continue;
            }
            if (p.isEmpty() || p.length() > 4) return null;
            int v;
            try {
                v = Integer.parseInt(p, 16);
            } catch (NumberFormatException e) {
                return null;
            }
            if (p.charAt(0) == '+' || p.charAt(0) == '-') return null;
            out[n++] = (byte) (v >> 8);
            out[n++] = (byte) v;
        }
        return n > 16 ? null : Arrays.copyOf(out, n);
    }

    private static String format6(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        // RFC 5952: compress the longest run of two or more zero groups, the first one on a tie.
        int bestStart = -1, bestLen = 1;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) { i++; continue; }
            int j = i;
            while (j < 8 && g[j] == 0) j++;
            if (j - i > bestLen) { bestStart = i; bestLen = j - i; }
            i = j;
        }
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
