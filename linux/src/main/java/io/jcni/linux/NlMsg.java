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

    /** This NLMSG_ERROR (or DONE with an error) reply as an exception, with the kernel's extended-ACK text. */
    ErrnoException errnoException(int errno, String operation) {
        String detail = null;
        if (type == NetlinkSocket.NLMSG_ERROR && (flags & NetlinkSocket.NLM_F_ACK_TLVS) != 0) {
            int echoed = (flags & NetlinkSocket.NLM_F_CAPPED) != 0
                    ? NlMessage.HEADER
                    : NlMessage.align(buf.getInt(body() + 4));
            int tlvStart = body() + 4 + echoed;
            if (tlvStart <= end) detail = NlAttrs.parse(buf, tlvStart, end).string(NetlinkSocket.NLMSGERR_ATTR_MSG);
        } else if (type == NetlinkSocket.NLMSG_DONE && (flags & NetlinkSocket.NLM_F_ACK_TLVS) != 0) {
            detail = NlAttrs.parse(buf, body() + 4, end).string(NetlinkSocket.NLMSGERR_ATTR_MSG);
        }
        return new ErrnoException(errno, operation, detail, null);
    }
}
