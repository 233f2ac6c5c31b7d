package io.jcni.linux;

import io.jcni.types.IpAddr;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The attributes found in a region of a received netlink message. Keeps offsets only; values
 * are decoded on access. Lookups scan linearly: messages carry a few dozen attributes at most.
 */
public final class NlAttrs {
    private static final int TYPE_MASK = 0x3fff; // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER

    private final ByteBuffer buf;
    private final int[] types;
    private final int[] offsets; // of the value, past the 4-byte attribute header
    private final int[] lengths;
    private final int count;

    private NlAttrs(ByteBuffer buf, int[] types, int[] offsets, int[] lengths, int count) {
        this.buf = buf;
        this.types = types;
        this.offsets = offsets;
        this.lengths = lengths;
        this.count = count;
    }

    /** Parses attributes in {@code buf} from {@code start} (absolute) to {@code end}. */
    public static NlAttrs parse(ByteBuffer buf, int start, int end) {
        int n = 0;
        int[] t = new int[16];
        int[] o = new int[16];
        int[] l = new int[16];
        int p = start;
        while (p + 4 <= end) {
            int len = Short.toUnsignedInt(buf.getShort(p));
            if (len < 4 || p + len > end) break; // truncated or corrupt: keep what parsed cleanly
            if (n == t.length) {
                t = Arrays.copyOf(t, n * 2);
                o = Arrays.copyOf(o, n * 2);
                l = Arrays.copyOf(l, n * 2);
            }
            t[n] = Short.toUnsignedInt(buf.getShort(p + 2)) & TYPE_MASK;
            o[n] = p + 4;
            l[n] = len - 4;
            n++;
            p += NlMessage.align(len);
        }
        return new NlAttrs(buf, t, o, l, n);
    }

    public int size() {
        return count;
    }

    public boolean has(int type) {
        return find(type) >= 0;
    }

    public int u8(int type, int absent) {
        int i = find(type);
        return i < 0 || lengths[i] < 1 ? absent : Byte.toUnsignedInt(buf.get(offsets[i]));
    }

    public int u16(int type, int absent) {
        int i = find(type);
        return i < 0 || lengths[i] < 2 ? absent : Short.toUnsignedInt(buf.getShort(offsets[i]));
    }

    public int be16(int type, int absent) {
        int i = find(type);
        if (i < 0 || lengths[i] < 2) return absent;
        return (Byte.toUnsignedInt(buf.get(offsets[i])) << 8) | Byte.toUnsignedInt(buf.get(offsets[i] + 1));
    }

    /** A u32 as a Java int (callers treat large values with Integer.toUnsignedLong). */
    public int u32(int type, int absent) {
        int i = find(type);
        return i < 0 || lengths[i] < 4 ? absent : buf.getInt(offsets[i]);
    }

    public long u64(int type, long absent) {
        int i = find(type);
        return i < 0 || lengths[i] < 8 ? absent : buf.getLong(offsets[i]);
    }

    /** A string attribute without its trailing NUL, or null. */
    public String string(int type) {
        int i = find(type);
        if (i < 0) return null;
        int len = lengths[i];
        while (len > 0 && buf.get(offsets[i] + len - 1) == 0) len--;
        byte[] b = new byte[len];
        buf.get(offsets[i], b);
        return new String(b, StandardCharsets.UTF_8);
    }

    public byte[] bytes(int type) {
        int i = find(type);
        if (i < 0) return null;
        byte[] b = new byte[lengths[i]];
        buf.get(offsets[i], b);
        return b;
    }

    /** A 4- or 16-byte address attribute, or null. */
    public IpAddr address(int type) {
        byte[] b = bytes(type);
        return b == null || (b.length != 4 && b.length != 16) ? null : new IpAddr(b);
    }

    public MacAddress mac(int type) {
        byte[] b = bytes(type);
        return b == null || b.length == 0 ? null : MacAddress.of(b);
    }

    /** The values of every attribute of {@code type}, in order; for repeated attributes. */
    public List<byte[]> bytesAll(int type) {
        List<byte[]> all = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (types[i] != type) continue;
            byte[] b = new byte[lengths[i]];
            buf.get(offsets[i], b);
            all.add(b);
        }
        return all;
    }

    /** The attributes nested in {@code type}; empty if absent. */
    public NlAttrs nested(int type) {
        int i = find(type);
        if (i < 0) return parse(buf, 0, 0);
        return parse(buf, offsets[i], offsets[i] + lengths[i]);
    }

    /** Every nested attribute set, in order; for arrays such as tc action lists. */
    public List<NlAttrs> nestedAll() {
        List<NlAttrs> all = new ArrayList<>(count);
        for (int i = 0; i < count; i++) all.add(parse(buf, offsets[i], offsets[i] + lengths[i]));
        return all;
    }

    /** Absolute offset of the value of {@code type} in the message buffer, or -1. */
    public int offset(int type) {
        int i = find(type);
        return i < 0 ? -1 : offsets[i];
    }

    public int length(int type) {
        int i = find(type);
        return i < 0 ? -1 : lengths[i];
    }

    public ByteBuffer buffer() {
        return buf;
    }

    private int find(int type) {
        for (int i = 0; i < count; i++) if (types[i] == type) return i;
        return -1;
    }
}
