package io.jcni.daemon.dhcp;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One DHCP message (RFC 2131 section 2): the fixed BOOTP header and the options after the magic
 * cookie. Encoding and decoding only; which message to send when is {@link DhcpClient}'s business.
 *
 * @param op        1 BOOTREQUEST (client to server), 2 BOOTREPLY
 * @param xid       transaction id chosen by the client, echoed by the server
 * @param secs      seconds since the client began acquiring or renewing
 * @param flags     bit 15 is the broadcast flag
 * @param ciaddr    client address, set only when the client is BOUND, RENEWING or REBINDING
 * @param yiaddr    "your" address: the one the server offers or acknowledges
 * @param siaddr    next server (TFTP), unused here
 * @param giaddr    relay agent
 * @param chaddr    client hardware address (6 bytes for Ethernet)
 * @param options   code to value, in order; each value at most as long as the message allows
 */
public record DhcpMessage(int op, int xid, int secs, int flags, byte[] ciaddr, byte[] yiaddr, byte[] siaddr,
                          byte[] giaddr, byte[] chaddr, Map<Integer, byte[]> options) {

    public static final int BOOTREQUEST = 1;
    public static final int BOOTREPLY = 2;
    public static final int BROADCAST_FLAG = 0x8000;
    /** 99.130.83.99: marks the start of DHCP options (RFC 2131 section 3). */
    static final int MAGIC_COOKIE = 0x63825363;
    static final int FIXED_LENGTH = 236;
    /** BOOTP relay agents may drop shorter messages (RFC 1542 section 2.1): pad requests to this. */
    static final int MIN_LENGTH = 300;

    // Package-private: an array constant is writable by whoever can see it.
    /** 0.0.0.0, for comparisons; a message's own unset address is an array of its own. */
    static final byte[] ZERO = {0, 0, 0, 0};
    /** 255.255.255.255: the limited broadcast, to every server on the segment. */
    static final byte[] BROADCAST = {(byte) 255, (byte) 255, (byte) 255, (byte) 255};

    public DhcpMessage {
        ciaddr = addr(ciaddr, "ciaddr");
        yiaddr = addr(yiaddr, "yiaddr");
        siaddr = addr(siaddr, "siaddr");
        giaddr = addr(giaddr, "giaddr");
        if (chaddr == null || chaddr.length > 16) throw new IllegalArgumentException("chaddr must be 0..16 bytes");
        options = Collections.unmodifiableMap(new LinkedHashMap<>(options));
    }

    private static byte[] addr(byte[] a, String what) {
        if (a == null) return new byte[4]; // 0.0.0.0; not ZERO itself, which the accessor would hand out
        if (a.length != 4) throw new IllegalArgumentException(what + " must be 4 bytes");
        return a;
    }

    /** The DHCP message type (option 53), or 0 when absent: a plain BOOTP message. */
    public int type() {
        byte[] t = options.get(DhcpOptions.MESSAGE_TYPE);
        return t == null || t.length != 1 ? 0 : t[0] & 0xff;
    }

    public byte[] option(int code) {
        return options.get(code);
    }

    public byte[] encode() {
        int optLen = 0;
        for (byte[] v : options.values()) optLen += 2 * ((v.length + 254) / 255 + (v.length == 0 ? 1 : 0)) + v.length;
        ByteBuffer b = ByteBuffer.allocate(Math.max(MIN_LENGTH, FIXED_LENGTH + 4 + optLen + 1));
        b.put((byte) op).put((byte) 1).put((byte) chaddr.length).put((byte) 0); // htype 1 = Ethernet, hops 0
        b.putInt(xid).putShort((short) secs).putShort((short) flags);
        b.put(ciaddr).put(yiaddr).put(siaddr).put(giaddr);
        b.put(Arrays.copyOf(chaddr, 16));
        b.position(FIXED_LENGTH); // sname (64) and file (128) stay zero
        b.putInt(MAGIC_COOKIE);
        for (Map.Entry<Integer, byte[]> e : options.entrySet()) {
            byte[] v = e.getValue();
            int off = 0;
            // Values longer than 255 bytes are split into several instances (RFC 3396).
            do {
                int n = Math.min(255, v.length - off);
                b.put(e.getKey().byteValue()).put((byte) n).put(v, off, n);
                off += n;
            } while (off < v.length);
        }
        b.put((byte) DhcpOptions.END);
        return b.array(); // the rest is zero: pad options
    }

    /** Decodes a message; {@link IllegalArgumentException} when it is not a well-formed DHCP message. */
    public static DhcpMessage decode(byte[] data) {
        if (data.length < FIXED_LENGTH + 4) throw new IllegalArgumentException("DHCP message of " + data.length + " bytes is too short");
        ByteBuffer b = ByteBuffer.wrap(data);
        int op = b.get() & 0xff;
        b.get(); // htype
        int hlen = b.get() & 0xff;
        b.get(); // hops
        int xid = b.getInt();
        int secs = b.getShort() & 0xffff;
        int flags = b.getShort() & 0xffff;
        byte[] ciaddr = take(b, 4), yiaddr = take(b, 4), siaddr = take(b, 4), giaddr = take(b, 4);
        byte[] chaddr = Arrays.copyOf(take(b, 16), Math.min(hlen, 16));
        b.position(FIXED_LENGTH);
        if (b.getInt() != MAGIC_COOKIE) throw new IllegalArgumentException("no DHCP magic cookie");
        Map<Integer, byte[]> options = new LinkedHashMap<>();
        while (b.hasRemaining()) {
            int code = b.get() & 0xff;
            if (code == DhcpOptions.PAD) continue;
            if (code == DhcpOptions.END) break;
            if (!b.hasRemaining()) throw new IllegalArgumentException("option " + code + " has no length");
            int len = b.get() & 0xff;
            if (len > b.remaining()) throw new IllegalArgumentException("option " + code + " overruns the message");
            byte[] v = take(b, len);
            byte[] prev = options.get(code);
            if (prev != null) { // a split long option (RFC 3396): concatenate
                byte[] joined = Arrays.copyOf(prev, prev.length + v.length);
                System.arraycopy(v, 0, joined, prev.length, v.length);
                v = joined;
            }
            options.put(code, v);
        }
        return new DhcpMessage(op, xid, secs, flags, ciaddr, yiaddr, siaddr, giaddr, chaddr, options);
    }

    /**
     * What can be read of a message {@link #decode} refuses (cut short, or with a broken option):
     * the header and, when it comes before the damage, the message type (0 otherwise); null when
     * not even the header is there. Enough to tell whether a reply that cannot be used was meant
     * for this client, and to say so.
     */
    public record Glimpse(int op, int xid, byte[] chaddr, int type) {}

    public static Glimpse glimpse(byte[] data) {
        if (data.length < FIXED_LENGTH) return null;
        ByteBuffer b = ByteBuffer.wrap(data);
        int op = b.get() & 0xff;
        b.get();
        int hlen = Math.min(b.get() & 0xff, 16);
        b.get();
        int xid = b.getInt();
        byte[] chaddr = Arrays.copyOfRange(data, 28, 28 + hlen);
        int type = 0;
        if (data.length >= FIXED_LENGTH + 4 && b.getInt(FIXED_LENGTH) == MAGIC_COOKIE) {
            int i = FIXED_LENGTH + 4;
            while (i + 1 < data.length) {
                int code = data[i] & 0xff;
                if (code == DhcpOptions.PAD) { i++; continue; }
                if (code == DhcpOptions.END) break;
                int len = data[i + 1] & 0xff;
                if (code == DhcpOptions.MESSAGE_TYPE && len == 1 && i + 2 < data.length) { type = data[i + 2] & 0xff; break; }
                i += 2 + len;
            }
        }
        return new Glimpse(op, xid, chaddr, type);
    }

    private static byte[] take(ByteBuffer b, int n) {
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }
}
