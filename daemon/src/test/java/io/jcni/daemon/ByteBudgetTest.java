package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ByteBudgetTest {

    /** A channel that hands out at most {@code step} bytes per read, then says what the buffer held. */
    private static final class Trickle implements ReadableByteChannel {
        final ReadableByteChannel in;
        final int step;
        int largestBuffer;

        Trickle(byte[] data, int step) {
            this.in = Channels.newChannel(new ByteArrayInputStream(data));
            this.step = step;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            largestBuffer = Math.max(largestBuffer, dst.capacity());
            ByteBuffer slice = dst.slice().limit(Math.min(step, dst.remaining()));
            int n = in.read(slice);
            if (n > 0) dst.position(dst.position() + n);
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }

    @Test
    void aBodyCostsWhatArrivedNotWhatWasAnnounced() throws IOException {
        ByteBudget budget = new ByteBudget(1 << 20);
        try (ByteBudget.Lease lease = budget.lease()) {
            Trickle t = new Trickle(new byte[1000], 100);
            ByteBudget.TruncatedException e = assertThrows(ByteBudget.TruncatedException.class,
                    () -> ByteBudget.readBody(t, Protocol.MAX_BODY, lease));
            assertEquals(1000, e.received);
            assertEquals(ByteBudget.FIRST_CHUNK, t.largestBuffer, "a 16 MiB announcement got " + t.largestBuffer + " bytes");
            assertEquals(ByteBudget.FIRST_CHUNK, lease.held());
        }
        assertEquals(0, budget.used(), "closing the lease gives it all back");
    }

    @Test
    void aWholeBodyIsReadExactly() throws IOException {
        byte[] data = new byte[100_000];
        for (int i = 0; i < data.length; i++) data[i] = (byte) i;
        ByteBudget budget = new ByteBudget(1 << 20);
        try (ByteBudget.Lease lease = budget.lease()) {
            ByteBuffer b = ByteBudget.readBody(new Trickle(data, 7000), data.length, lease);
            assertEquals(data.length, b.remaining());
            byte[] got = new byte[data.length];
            b.get(got);
            assertArrayEquals(data, got);
            assertTrue(lease.held() >= data.length && lease.held() < 2L * data.length, "held " + lease.held());
        }
    }

    @Test
    void whatDoesNotFitIsRefusedAtOnce() throws IOException {
        ByteBudget budget = new ByteBudget(64 << 10);
        try (ByteBudget.Lease other = budget.lease(); ByteBudget.Lease lease = budget.lease()) {
            assertTrue(other.tryGrow(60 << 10));
            assertThrows(ByteBudget.OverBudgetException.class, () -> ByteBudget.readBody(new Trickle(new byte[20_000], 20_000), 20_000, lease));
            other.close();
            assertEquals(20_000, ByteBudget.readBody(new Trickle(new byte[20_000], 20_000), 20_000, lease).remaining());
        }
        assertEquals(0, budget.used());
    }

    @Test
    void anAnswerWaitsForRoomUntilItsDeadline() throws Exception {
        ByteBudget budget = new ByteBudget(1000);
        ByteBudget.Lease holder = budget.lease();
        assertTrue(holder.tryGrow(900));
        try (ByteBudget.Lease answer = budget.lease()) {
            assertFalse(answer.grow(500, System.nanoTime() + Duration.ofMillis(50).toNanos()), "no room, deadline passed");
            Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ignored) {
                    // close anyway
                }
                holder.close();
            });
            assertTrue(answer.grow(500, System.nanoTime() + Duration.ofSeconds(20).toNanos()), "room once the other gave back");
            assertTrue(answer.growTo(300, System.nanoTime()), "an answer smaller than what the lease holds needs nothing more");
            assertEquals(500, answer.held());
            assertFalse(answer.grow(2000, System.nanoTime() + Duration.ofSeconds(20).toNanos()), "more than the whole budget: at once");
        }
        assertEquals(0, budget.used());
    }

    @Test
    void aDeadlineClosesWhatItGuardsUnlessDisarmed() throws Exception {
        try (Deadlines d = new Deadlines("test-deadlines")) {
            var fired = new java.util.concurrent.CountDownLatch(1);
            Deadlines.Armed a = d.arm(fired::countDown, Duration.ofMillis(20));
            assertTrue(fired.await(10, TimeUnit.SECONDS));
            assertTrue(a.fired());
            var closed = new java.util.concurrent.atomic.AtomicBoolean();
            Deadlines.Armed b = d.arm(() -> closed.set(true), Duration.ofMillis(50));
            b.close();
            Thread.sleep(200);
            assertFalse(closed.get());
            assertFalse(b.fired());
        }
    }

    @Test
    void theBudgetIsAQuarterOfTheHeapWithinBounds() {
        assertEquals(32L << 20, JcnidServer.ioBudget(128L << 20));
        assertEquals(Protocol.MAX_BODY + (1 << 20), JcnidServer.ioBudget(16L << 20));
        assertEquals(64L << 20, JcnidServer.ioBudget(8L << 30));
    }
}
