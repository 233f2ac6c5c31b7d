package io.jcni.linux;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Token-bucket parameters in the kernel's units.
 *
 * @param rateBytesPerSecond the sustained rate
 * @param bufferTicks the bucket size expressed as the time (in psched ticks) to send it at rate
 * @param limitBytes the queue limit
 */
public record TbfParams(long rateBytesPerSecond, int bufferTicks, int limitBytes) {
    /** The latency the CNI bandwidth plugin allows packets to wait in the queue. */
    public static final double LATENCY_MILLIS = 25;
    private static final double TIME_UNITS_PER_SEC = 1_000_000;

    /**
     * Parameters exactly as the reference bandwidth plugin derives them from bits: rate and burst
     * in bytes, buffer = burst's transmit time in ticks, limit = rate × 25 ms + burst, with Go's
     * conversions: the transmit time in microseconds and then in ticks are each cut to 32 bits
     * ({@code uint32(float64)} on amd64 truncates to int64 and keeps the low 32 bits), and so is the
     * limit. So a burst longer than the kernel's 2^32 ticks (containerd's 4294967295 bits at
     * 10 Mbit/s) gives the same wrapped buffer as the Go plugin: {@code tbf rate 10Mbit burst 193273526b lat 275s}.
     *
     * @throws IllegalArgumentException if rate or burst is not positive
     */
    public static TbfParams forBandwidth(long rateBits, long burstBits) {
        if (rateBits <= 0) throw new IllegalArgumentException("invalid rate: " + rateBits);
        if (burstBits <= 0) throw new IllegalArgumentException("invalid burst: " + burstBits);
        long rate = rateBits / 8;
        long burst = burstBits / 8;
        long usec = (long) ((double) burst * TIME_UNITS_PER_SEC / rate) & 0xFFFFFFFFL;
        int buffer = (int) (long) ((double) usec * tickInUsec());
        double latencyUsec = TIME_UNITS_PER_SEC * (LATENCY_MILLIS / 1000.0);
        int limit = (int) ((long) ((double) rate * latencyUsec / TIME_UNITS_PER_SEC) + burst);
        return new TbfParams(rate, buffer, limit);
    }

    /** Burst in bytes implied by the buffer, the inverse of {@link #forBandwidth}'s conversion. */
    public long burstBytes() {
        double usec = (double) Integer.toUnsignedLong(bufferTicks) / tickInUsec();
        return (long) (usec * rateBytesPerSecond / TIME_UNITS_PER_SEC);
    }

    /** psched ticks per microsecond, from /proc/net/psched as tc and the Go netlink library read it. */
    public static double tickInUsec() {
        return Clock.TICK_IN_USEC;
    }

    private static final class Clock {
        static final double TICK_IN_USEC = read();

        private static double read() {
            try {
                String[] f = Files.readString(Path.of("/proc/net/psched")).trim().split("\\s+");
                long t2us = Long.parseLong(f[0], 16);
                long us2t = Long.parseLong(f[1], 16);
                long clockRes = Long.parseLong(f[2], 16);
                if (clockRes == 1_000_000_000L) t2us = us2t; // the same compatibility rule as tc
                return (double) t2us / us2t * (clockRes / TIME_UNITS_PER_SEC);
            } catch (IOException | RuntimeException e) {
                return 15.625; // the value every kernel since 2.6.30 reports (1000 / 64)
            }
        }
    }
}
