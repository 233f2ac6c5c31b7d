package io.jcni.linux;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A {@link NetlinkSocket}'s send and receive buffers, passed on to the next socket when it closes. Each new
 * pair is 192 KB of direct memory, zeroed by the JDK and given back only after a collection;
 * jcnid opens two sockets a request, and reusing them took its RSS with 1,000 attachments from
 * 88 to 66 MB (docs/performance.md). Nothing relies on their old content: requests are copied
 * in, answers read up to their length.
 */
record NetlinkBuffers(ByteBuffer out, ByteBuffer in) {
    private static final int MAX_SPARE = 8;
    private static final ConcurrentLinkedQueue<NetlinkBuffers> SPARE = new ConcurrentLinkedQueue<>();

    static NetlinkBuffers take() {
        NetlinkBuffers b = SPARE.poll();
        if (b != null) return b;
        return new NetlinkBuffers(ByteBuffer.allocateDirect(64 * 1024).order(ByteOrder.nativeOrder()),
                ByteBuffer.allocateDirect(NetlinkSocket.RECEIVE_BUFFER).order(ByteOrder.nativeOrder()));
    }

    static void giveBack(ByteBuffer out, ByteBuffer in) {
        // The count is approximate under races; a few more or fewer spares is harmless.
        if (SPARE.size() < MAX_SPARE) SPARE.offer(new NetlinkBuffers(out.clear(), in.clear()));
    }
}
