package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LeaseTimesTest {
    static DhcpMessage ack(long lease, long t1, long t2) {
        Map<Integer, byte[]> o = new LinkedHashMap<>();
        o.put(DhcpOptions.MESSAGE_TYPE, new byte[] {DhcpOptions.ACK});
        if (lease >= 0) o.put(DhcpOptions.LEASE_TIME, DhcpOptions.u32(lease));
        if (t1 >= 0) o.put(DhcpOptions.RENEWAL_TIME, DhcpOptions.u32(t1));
        if (t2 >= 0) o.put(DhcpOptions.REBINDING_TIME, DhcpOptions.u32(t2));
        return new DhcpMessage(2, 1, 0, 0, null, null, null, null, new byte[6], o);
    }

    @Test
    void serverTimesAreUsed() throws Exception {
        LeaseTimes t = LeaseTimes.fromAck(ack(120, 4, 7), 1000);
        assertEquals(new LeaseTimes(1000, 5000, 8000, 121_000), t);
        assertEquals(LeaseTimes.Step.WAIT, t.step(4999));
        assertEquals(LeaseTimes.Step.RENEW, t.step(5000));
        assertEquals(LeaseTimes.Step.REBIND, t.step(8000));
        assertEquals(LeaseTimes.Step.EXPIRED, t.step(121_000));
    }

    @Test
    void defaultsAreHalfAndSevenEighths() throws Exception {
        assertEquals(new LeaseTimes(0, 1_800_000, 3_150_000, 3_600_000), LeaseTimes.fromAck(ack(3600, -1, -1), 0));
        // out of order: T1 after T2 falls back to 50%, T2 after expiry to 87.5%
        assertEquals(new LeaseTimes(0, 50_000, 90_000, 100_000), LeaseTimes.fromAck(ack(100, 95, 90), 0));
        assertEquals(new LeaseTimes(0, 10_000, 87_500, 100_000), LeaseTimes.fromAck(ack(100, 10, 200), 0));
    }

    @Test
    void aT1OfZeroOrBelowTheFloorTakesTheDefault() throws Exception {
        // T1 = 0 would renew again the moment each ACK arrives.
        assertEquals(new LeaseTimes(0, 60_000, 105_000, 120_000), LeaseTimes.fromAck(ack(120, 0, -1), 0));
        assertEquals(new LeaseTimes(0, 60_000, 105_000, 120_000), LeaseTimes.fromAck(ack(120, 1, 0), 0));
        assertEquals(new LeaseTimes(0, 2_000, 3_000, 120_000), LeaseTimes.fromAck(ack(120, 2, 3), 0), "the floor itself is fine");
        // T2 before T1's default: both defaults, in order.
        assertEquals(new LeaseTimes(0, 50_000, 87_500, 100_000), LeaseTimes.fromAck(ack(100, -1, 10), 0));
        // T2 equal to the lease: not before it.
        assertEquals(new LeaseTimes(0, 4_000, 87_500, 100_000), LeaseTimes.fromAck(ack(100, 4, 100), 0));
    }

    @Test
    void aOneSecondLeaseKeepsItsOrderBelowTheFloor() throws Exception {
        LeaseTimes t = LeaseTimes.fromAck(ack(1, -1, -1), 0);
        assertEquals(new LeaseTimes(0, 500, 875, 1_000), t);
        assertEquals(new LeaseTimes(0, 500, 875, 1_000), LeaseTimes.fromAck(ack(1, 0, 0), 0));
    }

    @Test
    void aZeroLeaseIsRefused() {
        DhcpException e = org.junit.jupiter.api.Assertions.assertThrows(DhcpException.class, () -> LeaseTimes.fromAck(ack(0, -1, -1), 0));
        assertEquals(DhcpException.Kind.ZERO_LEASE, e.kind());
    }

    @Test
    void halfUsed() {
        LeaseTimes t = new LeaseTimes(1000, 5000, 8000, 121_000);
        org.junit.jupiter.api.Assertions.assertFalse(t.halfUsed(60_999));
        org.junit.jupiter.api.Assertions.assertTrue(t.halfUsed(61_000));
        org.junit.jupiter.api.Assertions.assertFalse(new LeaseTimes(0, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE).halfUsed(Long.MAX_VALUE - 1));
    }

    @Test
    void infiniteLeaseNeverRenews() throws Exception {
        LeaseTimes t = LeaseTimes.fromAck(ack(0xffffffffL, -1, -1), 0);
        assertEquals(LeaseTimes.Step.WAIT, t.step(Long.MAX_VALUE - 1));
    }

    @Test
    void noLeaseTimeIsABadAck() {
        assertEquals(DhcpException.Kind.BAD_ACK,
                org.junit.jupiter.api.Assertions.assertThrows(DhcpException.class, () -> LeaseTimes.fromAck(ack(-1, -1, -1), 0)).kind());
    }

    @Test
    void retriesHalveTheTimeLeftButNotBelowAMinute() {
        LeaseTimes t = new LeaseTimes(0, 1_000_000, 2_000_000, 3_000_000);
        assertEquals(1_500_000, t.retryAt(1_000_000), "renewing: half way to T2");
        assertEquals(1_940_000 + 60_000, t.retryAt(1_940_000) , "60 s left: the floor reaches T2");
        assertEquals(2_000_000, t.retryAt(1_990_000), "less than 60 s left: at T2, never past it");
        assertEquals(2_500_000, t.retryAt(2_000_000), "rebinding: half way to expiry");
    }
}
