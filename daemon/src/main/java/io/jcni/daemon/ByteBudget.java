package io.jcni.daemon;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A global budget of bytes that a server's connections may hold at once (request bodies being
 * read, answers being written), so that what clients announce or make it buffer can never add up
 * to more than the heap. Memory is taken when bytes arrive, never for a length only announced:
 * {@link #readBody} grows its buffer with what was read.
 *
 * <p>Reusable by any socket jcnid serves: take a {@link Lease} per connection, {@link Lease#tryGrow}
 * (refuse at once) or {@link Lease#grow} (wait until a deadline) before holding more bytes, close the
 * lease when the connection is done. Pair it with {@link Deadlines} so a client that stalls also
 * gives its share back.
 */
public final class ByteBudget {
    /** The first buffer of a body, before any of it has arrived. */
    static final int FIRST_CHUNK = 1 << 10;

    private final long capacity;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition freed = lock.newCondition();
    private long used;

    public ByteBudget(long capacity) {
        if (capacity <= 0) throw new IllegalArgumentException("budget " + capacity);
        this.capacity = capacity;
    }

    public long capacity() {
        return capacity;
    }

    public long used() {
        lock.lock();
        try {
            return used;
        } finally {
            lock.unlock();
        }
    }

    /** A connection's share; close it to give everything back (idempotent). */
    public Lease lease() {
        return new Lease();
    }

    private boolean take(long n, long deadlineNanos, boolean wait) throws InterruptedException {
        lock.lock();
        try {
            while (used + n > capacity) {
                long left = deadlineNanos - System.nanoTime();
                if (!wait || n > capacity || left <= 0) return false;
                freed.awaitNanos(left);
            }
            used += n;
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void give(long n) {
        lock.lock();
        try {
            used -= n;
            freed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Bytes one connection holds. Not thread-safe: one connection, one thread. */
    public final class Lease implements AutoCloseable {
        private long held;

        private Lease() {}

        /** Takes n more bytes if the budget has them now. */
        public boolean tryGrow(long n) {
            try {
                return grow(n, 0, false);
            } catch (InterruptedException e) {
                throw new AssertionError(e); // never waits
            }
        }

        /** Takes n more bytes, waiting for other connections to give some back until deadlineNanos (System.nanoTime). */
        public boolean grow(long n, long deadlineNanos) throws InterruptedException {
            return grow(n, deadlineNanos, true);
        }

        private boolean grow(long n, long deadlineNanos, boolean wait) throws InterruptedException {
            if (n <= 0) return true;
            if (!take(n, deadlineNanos, wait)) return false;
            held += n;
            return true;
        }

        /**
         * Holds at least {@code total} bytes, waiting as {@link #grow}: for an answer that replaces
         * the request whose body this lease already holds (its share is reused, not added to).
         */
        public boolean growTo(long total, long deadlineNanos) throws InterruptedException {
            return grow(total - held, deadlineNanos);
        }

        public long held() {
            return held;
        }

        @Override
        public void close() {
            long n = held;
            held = 0;
            if (n > 0) give(n);
        }
    }

    /** The budget ran out: the request is refused rather than buffered. */
    public static final class OverBudgetException extends IOException {
        public OverBudgetException(String msg) {
            super(msg);
        }
    }

    /** The peer closed before sending all it announced; {@link #received} says how much came. */
    public static final class TruncatedException extends EOFException {
        public final int received;

        TruncatedException(int received, int announced) {
            super("got " + received + " of " + announced + " bytes");
            this.received = received;
        }
    }

    /**
     * Reads exactly {@code n} announced bytes. The buffer starts at {@link #FIRST_CHUNK} and doubles
     * only when what arrived has filled it, each growth taken from {@code lease} without waiting: a
     * client that announces 16 MiB and sends nothing costs 8 KiB, not 16 MiB.
     */
    public static ByteBuffer readBody(ReadableByteChannel ch, int n, Lease lease) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(0);
        while (b.position() < n) {
            if (!b.hasRemaining()) b = grown(b, n, lease);
            if (ch.read(b) < 0) throw new TruncatedException(b.position(), n);
        }
        return b.flip();
    }

    private static ByteBuffer grown(ByteBuffer b, int n, Lease lease) throws OverBudgetException {
        int size = (int) Math.min(n, Math.max(FIRST_CHUNK, 2L * b.capacity()));
        if (!lease.tryGrow(size - b.capacity())) {
            throw new OverBudgetException("a body of " + n + " bytes does not fit the memory budget now (" + b.position() + " read)");
        }
        return ByteBuffer.allocate(size).put(b.flip());
    }
}
