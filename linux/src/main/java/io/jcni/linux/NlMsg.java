package io.jcni.linux;

import java.nio.ByteBuffer;

/**
 * One received netlink message. {@code buf} holds it at absolute offsets {@code start} (the
 * nlmsghdr) to {@code end}; the family header begins at {@link #body()}.
 */
public record NlMsg(int type, int flags, int seq, int portId, ByteBuffer buf, int start, int end) {

    public int body() {
        return start + NlMessage.HEADER;
    }

    /** The attributes that follow a family header of {@code headerSize} bytes. */
    public NlAttrs attrs(int headerSize) {
        return NlAttrs.parse(buf, body() + NlMessage.align(headerSize), end);
    }

    public int u8(int bodyOffset) {
        return Byte.toUnsignedInt(buf.get(body() + bodyOffset));
    }

    public int u16(int bodyOffset) {
        return Short.toUnsignedInt(buf.getShort(body() + bodyOffset));
    }

    public int i32(int bodyOffset) {
        return buf.getInt(body() + bodyOffset);
    }

    public int bodyLength() {
        return end - body();
    }
}
