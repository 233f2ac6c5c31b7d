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
     * From an ACK received at {@code now}: the lease time (option 51, required), T1 (58) and T2
     * (59); T2 defaults to 87.5% and T1 to 50% of the lease time, and so does one that is out of
     * order (T1 after T2, T2 after expiry).
     */
    public static LeaseTimes fromAck(DhcpMessage ack, long now) throws DhcpException {
        long lease = DhcpOptions.seconds(ack.option(DhcpOptions.LEASE_TIME));
        if (lease < 0) throw new DhcpException(DhcpException.Kind.BAD_ACK, "the DHCPACK has no lease time (option 51)");
        if (lease == 0xffffffffL) return new LeaseTimes(now, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE); // infinite
        long leaseMs = lease * 1000;
        long t2 = DhcpOptions.seconds(ack.option(DhcpOptions.REBINDING_TIME)) * 1000;
        if (t2 < 0 || t2 > leaseMs) t2 = leaseMs * 7 / 8;
        long t1 = DhcpOptions.seconds(ack.option(DhcpOptions.RENEWAL_TIME)) * 1000;
        if (t1 < 0 || t1 > t2) t1 = leaseMs / 2;
        return new LeaseTimes(now, now + t1, now + t2, now + leaseMs);
    }

    public Step step(long now) {
        if (now >= expiresAt) return Step.EXPIRED;
        if (now >= rebindAt) return Step.REBIND;
        if (now >= renewAt) return Step.RENEW;
        return Step.WAIT;
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
