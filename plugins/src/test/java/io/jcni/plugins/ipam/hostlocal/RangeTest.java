package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Mirrors upstream's range_test.go and range_set_test.go. */
class RangeTest {
    static Range range(String subnet, String start, String end, String gw) {
        return Range.canonicalize(IpamConfig.parseCidr(subnet), ip(start), ip(end), ip(gw));
    }

    static Range range(String subnet) {
        return range(subnet, null, null, null);
    }

    static IpAddr ip(String s) {
        return s == null ? null : IpAddr.parse(s);
    }

    static String error(Runnable r) {
        return assertThrows(CniException.class, r::run).msg();
    }

    @ParameterizedTest
    @CsvSource({
        "192.0.2.0/24, 192.0.2.1, 192.0.2.254, 192.0.2.1",
        "192.0.2.0/25, 192.0.2.1, 192.0.2.126, 192.0.2.1",
        "192.0.2.0/30, 192.0.2.1, 192.0.2.2, 192.0.2.1",
        "10.0.0.0/8, 10.0.0.1, 10.255.255.254, 10.0.0.1",
        "2001:DB8:1::/64, 2001:db8:1::1, 2001:db8:1::ffff:ffff:ffff:ffff, 2001:db8:1::1",
        "2001:db8::/126, 2001:db8::1, 2001:db8::3, 2001:db8::1",
    })
    void fillsDefaults(String subnet, String start, String end, String gw) {
        Range r = range(subnet);
        assertEquals(ip(start), r.rangeStart());
        assertEquals(ip(end), r.rangeEnd());
        assertEquals(ip(gw), r.gateway());
    }

    @Test
    void rejectsTooSmallNetworks() {
        assertEquals("Network 192.0.2.0/31 too small to allocate from", error(() -> range("192.0.2.0/31")));
        assertEquals("Network 192.0.2.7/32 too small to allocate from", error(() -> range("192.0.2.7/32")));
        assertEquals("Network 2001:db8::/127 too small to allocate from", error(() -> range("2001:db8::/127")));
        assertEquals("Network 2001:db8::1/128 too small to allocate from", error(() -> range("2001:db8::1/128")));
    }

    @Test
    void rejectsHostBits() {
        assertEquals("Network has host bits set. For a subnet mask of length 24 the network address is 192.0.2.0",
                error(() -> range("192.0.2.12/24")));
        assertEquals("Network has host bits set. For a subnet mask of length 64 the network address is 2001:db8:1::",
                error(() -> range("2001:DB8:1::24:19ff:fee1:c44a/64")));
        assertEquals("Network has host bits set. For a subnet mask of length 63 the network address is 2001:db8:24:19fe::",
                error(() -> range("2001:DB8:24:19ff::/63")));
        assertEquals("Network has host bits set. For a subnet mask of length 23 the network address is 192.168.126.0",
                error(() -> range("192.168.127.0/23")));
    }

    @Test
    void validatesGatewayAndBounds() {
        assertEquals("gateway 192.168.1.1 not in network 10.0.0.0/24",
                error(() -> range("10.0.0.0/24", null, null, "192.168.1.1")));
        assertEquals("gateway 2001:db8::1 not in network 10.0.0.0/24",
                error(() -> range("10.0.0.0/24", null, null, "2001:db8::1")));
        assertEquals(ip("10.0.0.254"), range("10.0.0.0/24", null, null, "10.0.0.254").gateway());
        assertEquals("RangeStart 192.0.3.0 not in network 192.0.2.0/24",
                error(() -> range("192.0.2.0/24", "192.0.3.0", null, null)));
        assertEquals("RangeEnd 192.0.4.0 not in network 192.0.2.0/24",
                error(() -> range("192.0.2.0/24", null, "192.0.4.0", null)));
        assertEquals("RangeStart 192.0.2.50 not in network 192.0.2.0/24",
                error(() -> range("192.0.2.0/24", "192.0.2.50", "192.0.2.40", null)));
        assertEquals("IP <nil> not v4 nor v6", error(() -> Range.canonicalize(null, null, null, null)));
        Range r = range("192.0.2.0/24", "192.0.2.40", "192.0.2.50", "192.0.2.254");
        assertEquals("192.0.2.40-192.0.2.50", r.toString());
    }

    @Test
    void containsHonoursTheWindow() {
        Range r = range("192.0.2.0/24", "192.0.2.40", "192.0.2.50", "192.0.2.254");
        assertFalse(r.contains(ip("192.0.3.0")));
        assertFalse(r.contains(ip("192.0.2.39")));
        assertTrue(r.contains(ip("192.0.2.40")));
        assertTrue(r.contains(ip("192.0.2.50")));
        assertFalse(r.contains(ip("192.0.2.51")));
        assertFalse(r.contains(ip("::1")));
        Range v6 = range("2001:DB8:1::/64", "2001:db8:1::40", "2001:db8:1::50", null);
        assertFalse(v6.contains(ip("2001:db8:2::")));
        assertFalse(v6.contains(ip("2001:db8:1::39")));
        assertTrue(v6.contains(ip("2001:db8:1::40")));
        assertTrue(v6.contains(ip("2001:db8:1::50")));
        assertFalse(v6.contains(ip("2001:db8:1::51")));
    }

    @Test
    void detectsOverlapCommutatively() {
        Object[][] cases = {
            {range("10.0.0.0/24"), range("10.0.1.0/24"), false},
            {range("0.0.0.0/24"), range("::/24"), false},
            {range("10.0.0.0/24"), range("10.0.0.0/24"), true},
            {range("10.0.0.0/20"), range("10.0.1.0/24"), true},
            {range("10.0.0.0/24", null, "10.0.0.127", null), range("10.0.0.0/24", "10.0.0.128", null, null), false},
            {range("10.0.0.0/24", null, "10.0.0.127", null), range("10.0.0.0/24", "10.0.0.127", null, null), true},
        };
        for (Object[] c : cases) {
            Range a = (Range) c[0];
            Range b = (Range) c[1];
            assertEquals(c[2], a.overlaps(b), a + " vs " + b);
            assertEquals(c[2], b.overlaps(a), b + " vs " + a);
        }
    }

    @Test
    void rangeSetValidation() {
        assertEquals("empty range set", error(() -> RangeSet.of(List.of())));
        assertEquals("mixed address families", error(() -> RangeSet.of(List.of(range("10.0.0.0/24"), range("2001:db8::/64")))));
        assertEquals("subnets 10.0.0.1-10.0.0.254 and 10.0.0.1-10.0.0.126 overlap",
                error(() -> RangeSet.of(List.of(range("10.0.0.0/24"), range("10.0.0.0/25")))));
        RangeSet set = RangeSet.of(List.of(range("192.168.0.0/24"), range("172.16.1.0/24")));
        assertEquals("192.168.0.1-192.168.0.254,172.16.1.1-172.16.1.254", set.toString());
        assertTrue(set.contains(ip("172.16.1.9")));
        assertEquals(set.ranges().get(1), set.rangeFor(ip("172.16.1.9")));
        assertEquals("192.168.1.9 not in range set 192.168.0.1-192.168.0.254,172.16.1.1-172.16.1.254",
                error(() -> set.rangeFor(ip("192.168.1.9"))));
    }

    @Test
    void countsAllocatableAddresses() {
        assertEquals(BigInteger.valueOf(253), range("10.0.0.0/24").allocatableCount()); // .2-.254
        assertEquals(BigInteger.ONE, range("10.0.0.0/30").allocatableCount()); // .2
        // explicit window over network and broadcast: jcni still skips them
        assertEquals(BigInteger.valueOf(253), range("10.0.0.0/24", "10.0.0.0", "10.0.0.255", null).allocatableCount());
        assertEquals(BigInteger.valueOf(10), range("10.0.0.0/24", "10.0.0.100", "10.0.0.109", null).allocatableCount());
        assertEquals(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.TWO), range("2001:db8::/64").allocatableCount());
    }
}
