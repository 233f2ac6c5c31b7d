package io.jcni.daemon.dhcp;

/**
 * When a lease is renewed, rebound and lost (RFC 2131 4.4.5), all in epoch milliseconds.
 *
 * @param renewAt  T1: from then on the client asks the server that granted the lease (RENEWING)
 * @param rebindAt T2: from then on it asks any server (REBINDING)
 * @param expiresAt the lease is gone; the address must no longer be used
 */
public record LeaseTimes(long boundAt, long renewAt, long rebindAt, long expiresAt) {

    /** What to do at a moment of a lease's life. */
    public enum Step { WAIT, RENEW, REBIND, EXPIRED }

    /**
     * The shortest T1 taken from a server (or half a lease shorter than twice that): a T1 of 0
     * would have the client renew again as soon as each ACK arrives, at line rate.
     */
    static final long MIN_RENEW_MILLIS = 2_000;

    /**
     * From an ACK received at {@code now}: the lease time (option 51, required, not 0), T1 (58)
     * and T2 (59). They must be in order, T1 < T2 < lease, and T1 no shorter than
     * {@link #MIN_RENEW_MILLIS} (half the lease when that is shorter); a time that is absent or
     * breaks these rules is replaced by the RFC 2131 default, 50% of the lease for T1 and 87.5%
     * for T2, and when T1 is still not before T2 both take their defaults.
     */
    public static LeaseTimes fromAck(DhcpMessage ack, long now) throws DhcpException {
        long lease = DhcpOptions.seconds(ack.option(DhcpOptions.LEASE_TIME));
        if (lease < 0) throw new DhcpException(DhcpException.Kind.BAD_ACK, "the DHCPACK has no lease time (option 51)");
        if (lease == 0) throw new DhcpException(DhcpException.Kind.ZERO_LEASE, "the DHCPACK grants a lease of 0 seconds (option 51)");
        if (lease == 0xffffffffL) return new LeaseTimes(now, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE); // infinite
        long leaseMs = lease * 1000;
        long floor = Math.min(MIN_RENEW_MILLIS, leaseMs / 2);
        long t2 = DhcpOptions.seconds(ack.option(DhcpOptions.REBINDING_TIME)) * 1000;
        if (t2 <= floor || t2 >= leaseMs) t2 = leaseMs * 7 / 8;
        long t1 = DhcpOptions.seconds(ack.option(DhcpOptions.RENEWAL_TIME)) * 1000;
        if (t1 < floor || t1 >= t2) t1 = leaseMs / 2;
        if (t1 >= t2) {
            t1 = leaseMs / 2;
            t2 = leaseMs * 7 / 8;
        }
        return new LeaseTimes(now, now + t1, now + t2, now + leaseMs);
    }

    public Step step(long now) {
        if (now >= expiresAt) return Step.EXPIRED;
        if (now >= rebindAt) return Step.REBIND;
        if (now >= renewAt) return Step.RENEW;
        return Step.WAIT;
    }

    /** Whether at {@code now} half the lease or more has gone by (never for an infinite one). */
    public boolean halfUsed(long now) {
        if (expiresAt == Long.MAX_VALUE) return false;
        return now - boundAt >= (expiresAt - boundAt) / 2;
    }

    /** When the next thing happens after {@code now} if nothing succeeds meanwhile. */
    public long nextEvent(long now) {
        if (now < renewAt) return renewAt;
        if (now < rebindAt) return rebindAt;
        return expiresAt;
    }

    /**
     * When to try again after a failed renew or rebind at {@code now}: half the time left until
     * the next deadline (T2 while renewing, expiry while rebinding), but no sooner than 60 s unless
     * less than that is left (RFC 2131 4.4.5), and never past that deadline.
     */
    public long retryAt(long now) {
        long limit = nextEvent(now);
        if (limit == Long.MAX_VALUE) return limit;
        long left = limit - now;
        return now + Math.min(left, Math.max(left / 2, 60_000));
    }
}
