package io.jcni.daemon.dhcp;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** DHCP option codes (RFC 2132, RFC 3442) and the decoding of the values jcni uses. */
public final class DhcpOptions {
    private DhcpOptions() {}

    public static final int PAD = 0;
    public static final int SUBNET_MASK = 1;
    public static final int ROUTER = 3;
    public static final int DNS_SERVERS = 6;
    public static final int HOST_NAME = 12;
    public static final int DOMAIN_NAME = 15;
    public static final int STATIC_ROUTES = 33;
    public static final int REQUESTED_IP = 50;
    public static final int LEASE_TIME = 51;
    public static final int MESSAGE_TYPE = 53;
    public static final int SERVER_ID = 54;
    public static final int PARAMETER_REQUEST_LIST = 55;
    public static final int MESSAGE = 56;
    public static final int MAX_MESSAGE_SIZE = 57;
    public static final int RENEWAL_TIME = 58;
    public static final int REBINDING_TIME = 59;
    public static final int VENDOR_CLASS_ID = 60;
    public static final int CLIENT_ID = 61;
    public static final int USER_CLASS = 77;
    public static final int CLASSLESS_ROUTES = 121;
    public static final int END = 255;

    // Message types (option 53).
    public static final int DISCOVER = 1;
    public static final int OFFER = 2;
    public static final int REQUEST = 3;
    public static final int DECLINE = 4;
    public static final int ACK = 5;
    public static final int NAK = 6;
    public static final int RELEASE = 7;

    public static String typeName(int type) {
        return switch (type) {
            case DISCOVER -> "DHCPDISCOVER";
            case OFFER -> "DHCPOFFER";
            case REQUEST -> "DHCPREQUEST";
            case DECLINE -> "DHCPDECLINE";
            case ACK -> "DHCPACK";
            case NAK -> "DHCPNAK";
            case RELEASE -> "DHCPRELEASE";
            default -> "type " + type;
        };
    }

    /** A 4-byte value as an unsigned number of seconds, or -1 when absent or malformed. */
    public static long seconds(byte[] v) {
        if (v == null || v.length != 4) return -1;
        return ((v[0] & 0xffL) << 24) | ((v[1] & 0xffL) << 16) | ((v[2] & 0xffL) << 8) | (v[3] & 0xffL);
    }

    public static byte[] u32(long v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    /** A list of IPv4 addresses (options 3, 6): whole 4-byte groups; a ragged tail is ignored. */
    public static List<IpAddr> addresses(byte[] v) {
        List<IpAddr> out = new ArrayList<>();
        if (v == null) return out;
        for (int i = 0; i + 4 <= v.length; i += 4) out.add(ip(v, i));
        return out;
    }

    /** The first address of an address option, or null. */
    public static IpAddr firstAddress(byte[] v) {
        List<IpAddr> a = addresses(v);
        return a.isEmpty() ? null : a.getFirst();
    }

    /** The prefix length of a subnet mask (option 1), or -1 when it is not a contiguous mask. */
    public static int prefixLength(byte[] mask) {
        if (mask == null || mask.length != 4) return -1;
        long m = seconds(mask);
        int ones = Long.bitCount(m);
        long expected = ones == 0 ? 0 : (0xffffffffL << (32 - ones)) & 0xffffffffL;
        return m == expected ? ones : -1;
    }

    public static String text(byte[] v) {
        if (v == null) return null;
        int n = v.length;
        while (n > 0 && v[n - 1] == 0) n--; // some servers NUL-terminate strings
        return new String(v, 0, n, StandardCharsets.US_ASCII);
    }

    /** A route with its gateway (0.0.0.0 means on-link). */
    public record Route(Cidr dst, IpAddr gw) {}

    /**
     * Classless static routes (option 121, RFC 3442): repeated {prefix length, the significant
     * octets of the destination, 4-byte router}. A malformed value yields no routes at all, as the
     * RFC says a client must not use a partly parsed option.
     */
    public static List<Route> classlessRoutes(byte[] v) {
        List<Route> out = new ArrayList<>();
        if (v == null) return out;
        int i = 0;
        while (i < v.length) {
            int width = v[i++] & 0xff;
            if (width > 32) return List.of();
            int significant = (width + 7) / 8;
            if (i + significant + 4 > v.length) return List.of();
            byte[] dst = new byte[4];
            System.arraycopy(v, i, dst, 0, significant);
            i += significant;
            IpAddr gw = ip(v, i);
            i += 4;
            out.add(new Route(new Cidr(new IpAddr(dst), width).masked(), gw));
        }
        return out;
    }

    /** Encodes routes as option 121 (for tests and symmetry). */
    public static byte[] encodeClasslessRoutes(List<Route> routes) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (Route r : routes) {
            int width = r.dst().prefix();
            b.write(width);
            b.write(r.dst().address().bytes(), 0, (width + 7) / 8);
            b.write(r.gw().bytes(), 0, 4);
        }
        return b.toByteArray();
    }

    /** Static routes (option 33): pairs of classful destination host and router. */
    public static List<Route> staticRoutes(byte[] v) {
        List<Route> out = new ArrayList<>();
        if (v == null) return out;
        for (int i = 0; i + 8 <= v.length; i += 8) {
            IpAddr dst = ip(v, i);
            int first = dst.bytes()[0] & 0xff;
            int prefix = first < 128 ? 8 : first < 192 ? 16 : 24; // the classful mask, as the reference uses
            out.add(new Route(new Cidr(dst, prefix), ip(v, i + 4)));
        }
        return out;
    }

    private static IpAddr ip(byte[] v, int off) {
        byte[] a = new byte[4];
        System.arraycopy(v, off, a, 0, 4);
        return new IpAddr(a);
    }
}
