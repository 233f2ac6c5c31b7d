package io.jcni.linux;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A netlink socket talking to the kernel: request/ACK and dump exchanges with sequence checks.
 *
 * <p>The socket belongs to the network namespace of the thread that created it, for its whole
 * life; {@link #open(int, Netns)} creates it on the namespace's thread and then any thread may use
 * it. Requests are serialized on the socket.
 */
public final class NetlinkSocket implements AutoCloseable {
    public static final int NETLINK_ROUTE = 0;
    /** nfnetlink: conntrack, nf_tables. */
    public static final int NETLINK_NETFILTER = 12;

    public static final int NLM_F_REQUEST = 0x1;
    public static final int NLM_F_MULTI = 0x2;
    public static final int NLM_F_ACK = 0x4;
    public static final int NLM_F_ROOT = 0x100;
    public static final int NLM_F_MATCH = 0x200;
    public static final int NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH;
    public static final int NLM_F_REPLACE = 0x100;
    public static final int NLM_F_EXCL = 0x200;
    public static final int NLM_F_CREATE = 0x400;
    public static final int NLM_F_APPEND = 0x800;

    static final int NLMSG_NOOP = 1;
    static final int NLMSG_ERROR = 2;
    static final int NLMSG_DONE = 3;
    static final int NLM_F_DUMP_INTR = 0x10;
    static final int NLM_F_CAPPED = 0x100;
    static final int NLM_F_ACK_TLVS = 0x200;
    private static final int NETLINK_CAP_ACK = 10;
    private static final int NETLINK_EXT_ACK = 11;
    static final int NLMSGERR_ATTR_MSG = 1;

    static final int RECEIVE_BUFFER = 128 * 1024;
    private static final int DEFAULT_TIMEOUT_MILLIS = 10_000;
    private static final int DUMP_RETRIES = 10;

    private final int fd;
    private final int portId;
    private final ByteBuffer out;
    private final ByteBuffer in;
    private int seq = 1;
    private boolean closed;
    /** The send buffer asked for so far; the kernel's default (net.core.wmem_default) is larger than {@code out}. */
    private int sendBuffer = 64 * 1024;
    private int timeoutMillis = DEFAULT_TIMEOUT_MILLIS;

    private NetlinkSocket(int fd, int portId) {
        this.fd = fd;
        this.portId = portId;
        NetlinkBuffers b = NetlinkBuffers.take();
        this.out = b.out();
        this.in = b.in();
    }

    /** A socket in the calling thread's network namespace. */
    public static NetlinkSocket open(int protocol) {
        int fd = Native.socket(Native.AF_NETLINK, Native.SOCK_RAW, protocol);
        try {
            Native.setsockoptInt(fd, Native.SOL_SOCKET, Native.SO_RCVBUF, RECEIVE_BUFFER);
            try {
                // Kernel error text ("Invalid MTU ...") and short error echoes; optional on old kernels.
                Native.setsockoptInt(fd, Native.SOL_NETLINK, NETLINK_EXT_ACK, 1);
                Native.setsockoptInt(fd, Native.SOL_NETLINK, NETLINK_CAP_ACK, 1);
            } catch (ErrnoException ignored) {
                // Plain errno replies remain.
            }
            Native.setReceiveTimeout(fd, DEFAULT_TIMEOUT_MILLIS);
            return new NetlinkSocket(fd, Native.bindNetlink(fd, 0));
        } catch (RuntimeException e) {
            Native.close(fd);
            throw e;
        }
    }

    /** A socket bound for life to {@code ns}: created on the namespace's thread. */
    public static NetlinkSocket open(int protocol, Netns ns) {
        // An anonymous class, not a lambda: the first lambda's bootstrap is a cold-start cost.
        return ns.run(new Netns.Task<NetlinkSocket, RuntimeException>() {
            @Override
            public NetlinkSocket call() {
                return open(protocol);
            }
        });
    }

    public int portId() {
        return portId;
    }

    /** Bounds every later wait for a kernel reply. */
    public synchronized void setTimeout(int millis) {
        Native.setReceiveTimeout(fd, millis);
        timeoutMillis = millis;
    }

    /**
     * Sends {@code msg} with NLM_F_REQUEST|NLM_F_ACK and waits for the ACK. Returns the messages
     * that came before it (a GET's answer); an NLMSG_ERROR becomes an ErrnoException naming
     * {@code operation}.
     */
    public synchronized List<NlMsg> request(NlMessage msg, String operation) {
        return exchange(msg, NLM_F_REQUEST | NLM_F_ACK, operation);
    }

    /**
     * Sends {@code msg} as a dump (NLM_F_REQUEST|NLM_F_DUMP) and collects every message until
     * NLMSG_DONE. A dump the kernel marks as interrupted (state changed meanwhile) is redone.
     */
    public synchronized List<NlMsg> dump(NlMessage msg, String operation) {
        for (int attempt = 1; ; attempt++) {
            try {
                return exchange(msg, NLM_F_REQUEST | NLM_F_DUMP, operation);
            } catch (DumpInterrupted e) {
                if (attempt == DUMP_RETRIES) {
                    throw new ErrnoException(Errno.EINTR, operation, "dump interrupted " + attempt + " times", null);
                }
            }
        }
    }

    /**
     * Sends {@code messages} as one nfnetlink transaction (NFNL_MSG_BATCH_BEGIN ... BATCH_END for
     * {@code subsystem}) in a single datagram and reads the outcome: all of them apply, or none
     * does. The kernel handles the batch while {@code send} runs, keeps going after an error and
     * answers every failing message, then acknowledges (NLM_F_ACK) the last one, whose answer
     * therefore comes last: the wait ends there. (An ACK per message would be simpler to count,
     * but each answer takes a socket buffer of its own, and a batch of a few hundred overflows
     * the receive buffer.) An error answering the BEGIN message (EPERM, ENOMEM, a malformed
     * batch) ends the wait at once.
     *
     * @param operations what each message does, for the error of the first one that fails
     * @throws ErrnoException for the first failing message, naming its operation
     */
    public synchronized void batch(int subsystem, List<NlMessage> messages, List<String> operations) {
        if (closed) throw new IllegalStateException("netlink socket closed");
        if (messages.size() != operations.size()) throw new IllegalArgumentException("one operation per message");
        if (messages.isEmpty()) return;
        int[] seqs = sendBatch(subsystem, messages);
        String what = operations.get(0) + (messages.size() > 1 ? " (and " + (messages.size() - 1) + " more)" : "");
        awaitBatch(seqs, operations, what);
    }

    /** Sends the transaction in one datagram; the sequence numbers of its messages, consecutive after BEGIN's. */
    private int[] sendBatch(int subsystem, List<NlMessage> messages) {
        int size = 2 * BATCH_MARKER;
        for (NlMessage m : messages) size += NlMessage.align(m.length());
        ByteBuffer buf = size <= out.capacity() ? out : ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
        if (size > sendBuffer) {
            // The kernel refuses a datagram larger than the socket's send buffer (EMSGSIZE); it
            // caps the request at net.core.wmem_max and doubles it.
            Native.setsockoptInt(fd, Native.SOL_SOCKET, Native.SO_SNDBUF, size);
            sendBuffer = size;
        }
        if (seq > Integer.MAX_VALUE - messages.size() - 4) seq = 1; // consecutive numbers, no wrap inside a batch
        int first = nextSeq();
        int[] seqs = new int[messages.size()];
        buf.clear();
        putBatchMarker(buf, NFNL_MSG_BATCH_BEGIN, subsystem, first);
        for (int i = 0; i < messages.size(); i++) {
            seqs[i] = nextSeq();
            ByteBuffer m = messages.get(i).finish(seqs[i], portId);
            boolean last = i == messages.size() - 1;
            m.putShort(6, (short) (messages.get(i).flags() | NLM_F_REQUEST | (last ? NLM_F_ACK : 0)));
            buf.put(m);
            while ((buf.position() & 3) != 0) buf.put((byte) 0);
        }
        putBatchMarker(buf, NFNL_MSG_BATCH_END, subsystem, nextSeq());
        Native.send(fd, buf, 0, buf.position());
        return seqs;
    }

    /** Reads the answers to a batch up to the last message's ACK; throws the first failing message's error. */
    private void awaitBatch(int[] seqs, List<String> operations, String what) {
        int first = seqs[0] - 1; // BEGIN's
        ErrnoException firstError = null;
        int firstErrorIndex = Integer.MAX_VALUE;
        boolean overrun = false;
        while (true) {
            int n;
            try {
                n = Native.receive(fd, in, 0, in.capacity());
            } catch (ErrnoException e) {
                if (e.is(Errno.ENOBUFS) && !overrun) {
                    // More answers than the receive buffer holds (errors of a large failed batch):
                    // the kernel dropped the later ones and says so once. The earlier ones are
                    // queued, all of them before send returned, so read them without waiting long.
                    overrun = true;
                    Native.setReceiveTimeout(fd, OVERRUN_DRAIN_MILLIS);
                    continue;
                }
                if (overrun) Native.setReceiveTimeout(fd, timeoutMillis);
                if (overrun && e.is(Errno.EAGAIN)) {
                    if (firstError != null) throw firstError;
                    throw new ErrnoException(Errno.ENOBUFS, what, "the kernel's answers overflowed the receive buffer", e);
                }
                throw e.during(what);
            }
            for (int p = 0; p + NlMessage.HEADER <= n; ) {
                int mlen = in.getInt(p);
                if (mlen < NlMessage.HEADER || p + mlen > n) throw new ErrnoException(Errno.EIO, what, "malformed netlink reply", null);
                int type = Short.toUnsignedInt(in.getShort(p + 4));
                int seq = in.getInt(p + 8);
                if (type == NLMSG_ERROR && in.getInt(p + 12) == portId) {
                    int err = in.getInt(p + NlMessage.HEADER);
                    if (seq == first && err != 0) {
                        if (overrun) Native.setReceiveTimeout(fd, timeoutMillis);
                        throw copy(p, mlen).errnoException(-err, "nfnetlink batch: " + what);
                    }
                    int index = seq - seqs[0];
                    if (index >= 0 && index < seqs.length && seqs[index] == seq) {
                        if (err != 0 && index < firstErrorIndex) {
                            firstErrorIndex = index;
                            firstError = copy(p, mlen).errnoException(-err, operations.get(index));
                        }
                        if (index == seqs.length - 1) {
                            if (overrun) Native.setReceiveTimeout(fd, timeoutMillis);
                            if (firstError != null) throw firstError;
                            return;
                        }
                    }
                }
                p += NlMessage.align(mlen);
            }
        }
    }

    /** Requests per datagram in {@link #requestEach}: their ACKs (a few hundred bytes of receive buffer each) fit {@link #RECEIVE_BUFFER} many times over. */
    static final int PIPELINE = 64;

    /**
     * Sends {@code messages} (changes, each acknowledged) several to a datagram and collects every
     * answer: one system call pair per {@link #PIPELINE} requests instead of per request. Unlike
     * {@link #batch} there is no transaction: the kernel applies each message on its own, in
     * order, and a failing one does not stop the next.
     *
     * @param operations what each message does, naming its error
     * @return per message, null (done) or its error
     */
    public synchronized List<ErrnoException> requestEach(List<NlMessage> messages, List<String> operations) {
        if (closed) throw new IllegalStateException("netlink socket closed");
        if (messages.size() != operations.size()) throw new IllegalArgumentException("one operation per message");
        List<ErrnoException> outcome = new ArrayList<>(messages.size());
        int from = 0;
        while (from < messages.size()) {
            int to = Math.min(messages.size(), from + PIPELINE);
            if (seq > Integer.MAX_VALUE - PIPELINE - 4) seq = 1; // consecutive numbers within a datagram
            int first = seq;
            out.clear();
            for (int i = from; i < to; i++) {
                NlMessage msg = messages.get(i);
                int len = NlMessage.align(msg.length());
                if (len > out.remaining()) {
                    if (i == from) throw new ErrnoException(Errno.EMSGSIZE, operations.get(i), "request of " + msg.length() + " bytes", null);
                    to = i; // the rest goes in the next datagram
                    break;
                }
                ByteBuffer m = msg.finish(nextSeq(), portId);
                m.putShort(6, (short) (msg.flags() | NLM_F_REQUEST | NLM_F_ACK));
                out.put(m);
                while ((out.position() & 3) != 0) out.put((byte) 0);
            }
            int count = to - from;
            ErrnoException[] errors = new ErrnoException[count];
            boolean[] answered = new boolean[count];
            int pending = count;
            Native.send(fd, out, 0, out.position());
            while (pending > 0) {
                int n;
                try {
                    n = Native.receive(fd, in, 0, in.capacity());
                } catch (ErrnoException e) {
                    throw e.during(operations.get(from) + (count > 1 ? " (and " + (count - 1) + " more)" : ""));
                }
                for (int p = 0; p + NlMessage.HEADER <= n; ) {
                    int mlen = in.getInt(p);
                    if (mlen < NlMessage.HEADER || p + mlen > n) throw new ErrnoException(Errno.EIO, operations.get(from), "malformed netlink reply", null);
                    int type = Short.toUnsignedInt(in.getShort(p + 4));
                    int index = in.getInt(p + 8) - first;
                    if (type == NLMSG_ERROR && in.getInt(p + 12) == portId && index >= 0 && index < count && !answered[index]) {
                        answered[index] = true;
                        pending--;
                        int err = in.getInt(p + NlMessage.HEADER);
                        if (err != 0) errors[index] = copy(p, mlen).errnoException(-err, operations.get(from + index));
                    }
                    p += NlMessage.align(mlen);
                }
            }
            for (ErrnoException e : errors) outcome.add(e);
            from = to;
        }
        return outcome;
    }

    /** How long to wait for answers still queued after an overrun: they were all queued before send returned. */
    private static final int OVERRUN_DRAIN_MILLIS = 200;
    private static final int NFNL_MSG_BATCH_BEGIN = 0x10;
    private static final int NFNL_MSG_BATCH_END = 0x11;
    private static final int BATCH_MARKER = NlMessage.HEADER + 4;

    /** struct nlmsghdr + struct nfgenmsg {AF_UNSPEC, NFNETLINK_V0, res_id = subsystem, big endian}. */
    private void putBatchMarker(ByteBuffer buf, int type, int subsystem, int seq) {
        buf.putInt(BATCH_MARKER).putShort((short) type).putShort((short) NLM_F_REQUEST).putInt(seq).putInt(portId);
        buf.put((byte) 0).put((byte) 0).put((byte) (subsystem >> 8)).put((byte) subsystem);
    }

    /** One reply copied out of the reused receive buffer, as {@link NlMsg#errnoException} reads it. */
    private NlMsg copy(int p, int mlen) {
        ByteBuffer b = ByteBuffer.allocate(mlen).order(ByteOrder.nativeOrder());
        b.put(0, in, p, mlen);
        return new NlMsg(Short.toUnsignedInt(b.getShort(4)), Short.toUnsignedInt(b.getShort(6)), b.getInt(8), b.getInt(12), b, 0, mlen);
    }

    private List<NlMsg> exchange(NlMessage msg, int extraFlags, String operation) {
        if (closed) throw new IllegalStateException("netlink socket closed");
        int mySeq = nextSeq();
        ByteBuffer m = msg.finish(mySeq, portId);
        m.putShort(6, (short) (msg.flags() | extraFlags));
        int len = m.remaining();
        if (len > out.capacity()) throw new ErrnoException(Errno.EMSGSIZE, operation, "request of " + len + " bytes", null);
        out.clear();
        out.put(m);
        Native.send(fd, out, 0, len);

        boolean interrupted = false;
        List<NlMsg> replies = new ArrayList<>();
        while (true) {
            int n;
            try {
                n = Native.receive(fd, in, 0, in.capacity());
            } catch (ErrnoException e) {
                throw e.during(operation);
            }
            // Copy out of the reused direct buffer: returned messages must outlive the next receive.
            ByteBuffer datagram = ByteBuffer.allocate(n).order(ByteOrder.nativeOrder());
            datagram.put(0, in, 0, n);
            for (int p = 0; p + NlMessage.HEADER <= n; ) {
                int mlen = datagram.getInt(p);
                if (mlen < NlMessage.HEADER || p + mlen > n) {
                    throw new ErrnoException(Errno.EIO, operation, "malformed netlink reply", null);
                }
                NlMsg reply = new NlMsg(Short.toUnsignedInt(datagram.getShort(p + 4)),
                        Short.toUnsignedInt(datagram.getShort(p + 6)), datagram.getInt(p + 8),
                        datagram.getInt(p + 12), datagram, p, p + mlen);
                p += NlMessage.align(mlen);
                if (reply.seq() != mySeq || reply.portId() != portId) continue; // a late answer to an abandoned request
                if ((reply.flags() & NLM_F_DUMP_INTR) != 0) interrupted = true;
                switch (reply.type()) {
                    case NLMSG_NOOP -> { }
                    case NLMSG_ERROR -> {
                        int err = reply.i32(0);
                        if (err != 0) throw reply.errnoException(-err, operation);
                        return replies; // the ACK
                    }
                    case NLMSG_DONE -> {
                        int err = reply.bodyLength() >= 4 ? reply.i32(0) : 0;
                        if (err < 0) throw reply.errnoException(-err, operation);
                        if (interrupted) throw new DumpInterrupted();
                        return replies;
                    }
                    default -> replies.add(reply);
                }
            }
        }
    }

    private int nextSeq() {
        int s = seq++;
        if (seq == Integer.MAX_VALUE) seq = 1;
        return s;
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        Native.close(fd);
        NetlinkBuffers.giveBack(out, in);
    }

    private static final class DumpInterrupted extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DumpInterrupted() {
            super(null, null, false, false);
        }
    }
}
