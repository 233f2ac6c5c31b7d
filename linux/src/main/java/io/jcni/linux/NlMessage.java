package io.jcni.linux;

import io.jcni.types.IpAddr;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Builds one netlink request: the 16-byte nlmsghdr, a family header written field by field, then
 * attributes (nested ones via {@link #nest}/{@link #end}). Native byte order, 4-byte alignment.
 * The length, sequence number and port id are filled in by {@link NetlinkSocket}.
 */
public final class NlMessage {
    public static final int HEADER = 16;
    /** Flag on a nested attribute's type; some kernel parsers insist on it (e.g. IFLA_PROTINFO). */
    public static final int NLA_F_NESTED = 0x8000;

    private ByteBuffer buf;
    private final int type;
    private final int flags;

    public NlMessage(int type, int flags) {
        this.type = type;
        this.flags = flags;
        buf = ByteBuffer.allocate(256).order(ByteOrder.nativeOrder());
        buf.putInt(0).putShort((short) type).putShort((short) flags).putInt(0).putInt(0);
    }

    public int type() {
        return type;
    }

    public int flags() {
        return flags;
    }

    // Family-header fields, written in order.

    public NlMessage u8(int v) {
        room(1).put((byte) v);
        return this;
    }

    public NlMessage u16(int v) {
        room(2).putShort((short) v);
        return this;
    }

    public NlMessage u32(int v) {
        room(4).putInt(v);
        return this;
    }

    public NlMessage u64(long v) {
        room(8).putLong(v);
        return this;
    }

    public NlMessage bytes(byte[] v) {
        room(v.length).put(v);
        return this;
    }

    public NlMessage zeros(int n) {
        room(n).put(new byte[n]);
        return this;
    }

    // Attributes.

    public NlMessage attr(int attrType, byte[] value) {
        int len = 4 + value.length;
        room(align(len)).putShort((short) len).putShort((short) attrType).put(value);
        pad();
        return this;
    }

    public NlMessage attrU8(int attrType, int v) {
        return attr(attrType, new byte[] {(byte) v});
    }

    public NlMessage attrU16(int attrType, int v) {
        room(8).putShort((short) 6).putShort((short) attrType).putShort((short) v);
        pad();
        return this;
    }

    public NlMessage attrU32(int attrType, int v) {
        room(8).putShort((short) 8).putShort((short) attrType).putInt(v);
        return this;
    }

    public NlMessage attrU64(int attrType, long v) {
        room(12).putShort((short) 12).putShort((short) attrType).putLong(v);
        return this;
    }

    /** A 16-bit value in network byte order (ports). */
    public NlMessage attrBe16(int attrType, int v) {
        return attr(attrType, new byte[] {(byte) (v >>> 8), (byte) v});
    }

    /** A NUL-terminated string, as the kernel's NLA_STRING/NLA_NUL_STRING parsers expect. */
    public NlMessage attrString(int attrType, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return attr(attrType, Arrays.copyOf(b, b.length + 1));
    }

    public NlMessage attrAddress(int attrType, IpAddr a) {
        return attr(attrType, a.bytes());
    }

    public NlMessage attrFlag(int attrType) {
        room(4).putShort((short) 4).putShort((short) attrType);
        return this;
    }

    /** Opens a nested attribute; returns a mark for {@link #end}. */
    public int nest(int attrType) {
        int start = buf.position();
        room(4).putShort((short) 0).putShort((short) attrType);
        return start;
    }

    public NlMessage end(int mark) {
        buf.putShort(mark, (short) (buf.position() - mark));
        return this;
    }

    /** The finished message, with length, sequence number and port id filled in. */
    public ByteBuffer finish(int seq, int portId) {
        buf.putInt(0, buf.position());
        buf.putInt(8, seq);
        buf.putInt(12, portId);
        return buf.duplicate().order(ByteOrder.nativeOrder()).flip();
    }

    public int length() {
        return buf.position();
    }

    static int align(int n) {
        return (n + 3) & ~3;
    }

    private void pad() {
        int p = align(buf.position()) - buf.position();
        if (p > 0) room(p).put(new byte[p]);
    }

    private ByteBuffer room(int n) {
        if (buf.remaining() < n) {
            ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n + 64))
                    .order(ByteOrder.nativeOrder());
            bigger.put(buf.flip());
            buf = bigger;
        }
        return buf;
    }
}
