package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.net.InetAddress;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddrTest {

    @ParameterizedTest
    @CsvSource({
        "10.1.2.3, 10.1.2.3",
        "fd00:0:0:0:0:0:0:5, fd00::5",
        "FD00::0005, fd00::5",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "::, ::",
        "::1, ::1",
        "::ffff:10.1.2.3, 10.1.2.3",
        "64:ff9b::10.1.2.3, 64:ff9b::a01:203",
        "1:0:0:2:0:0:0:3, 1:0:0:2::3",
    })
    void printsLikeGo(String in, String out) {
        assertEquals(out, IpAddr.parse(in).toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.256", "01.2.3.4", "a.b.c.d", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "localhost", "fe80::1%eth0", "1.2.3.4.5", ":1"})
    void rejectsNonLiterals(String in) {
        assertNull(IpAddr.tryParse(in));
    }

    @Test
    void randomV6AgreesWithTheJdkParser() throws Exception {
        Random rnd = new Random(42);
        for (int i = 0; i < 2000; i++) {
            byte[] b = new byte[16];
            for (int j = 0; j < 16; j++) b[j] = rnd.nextInt(3) == 0 ? (byte) rnd.nextInt(256) : 0;
            b[0] = (byte) 0xfd; // keep clear of v4-mapped forms
            IpAddr a = new IpAddr(b);
            assertArrayEquals(InetAddress.getByAddress(b).getAddress(), IpAddr.parse(a.toString()).bytes(), a.toString());
        }
    }

    @Test
    void cidrMath() {
        Cidr c = Cidr.parse("10.1.2.3/16");
        assertEquals("10.1.0.0", c.network().toString());
        assertEquals("10.1.255.255", c.last().toString());
        assertEquals("255.255.0.0", c.mask().toString());
        assertTrue(c.contains(IpAddr.parse("10.1.99.1")));
        assertFalse(c.contains(IpAddr.parse("10.2.0.1")));
        assertEquals("fd00::/64", Cidr.parse("fd00::5/64").masked().toString());
        assertEquals("fd00::ffff:ffff:ffff:ffff", Cidr.parse("fd00::5/64").last().toString());
        assertNull(Cidr.tryParse("10.0.0.1/33"));
        assertNull(Cidr.tryParse("10.0.0.1"));
        assertEquals("10.0.1.0", IpAddr.parse("10.0.0.255").add(1).toString());
    }

    @Test
    void nextAndPreviousStepAndWrapLikeAFixedWidthCounter() {
        assertEquals(IpAddr.parse("10.0.1.0"), IpAddr.parse("10.0.0.255").next());
        assertEquals(IpAddr.parse("0.0.0.0"), IpAddr.parse("255.255.255.255").next());
        assertEquals(IpAddr.parse("255.255.255.255"), IpAddr.parse("0.0.0.0").previous());
        assertEquals(IpAddr.parse("10.0.0.255"), IpAddr.parse("10.0.1.0").previous());
        assertEquals(IpAddr.parse("::1:0:0:0:0"), IpAddr.parse("::ffff:ffff:ffff:ffff").next());
        assertEquals(IpAddr.parse("::ffff:ffff:ffff:ffff"), IpAddr.parse("::1:0:0:0:0").previous());
        assertEquals(IpAddr.parse("::"), IpAddr.parse("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").next());
        // IPv6 stays IPv6 even when stepping into the IPv4-mapped block
        IpAddr beforeMapped = IpAddr.parse("::fffe:ffff:ffff");
        assertTrue(beforeMapped.next().isV6());
        assertEquals(16, beforeMapped.next().bytes().length);
    }

    @Test
    void nextAgreesWithAdd() {
        Random rnd = new Random(7);
        for (int i = 0; i < 2000; i++) {
            byte[] b = new byte[rnd.nextBoolean() ? 4 : 16];
            rnd.nextBytes(b);
            if (rnd.nextInt(4) == 0) for (int j = b.length / 2; j < b.length; j++) b[j] = (byte) 0xff;
            IpAddr a = new IpAddr(b);
            boolean last = a.toBigInteger().bitLength() == a.bits() && a.toBigInteger().bitCount() == a.bits();
            if (!last) assertEquals(a.add(1), a.next(), a.toString());
            boolean first = a.toBigInteger().signum() == 0;
            if (!first) assertEquals(a.add(-1), a.previous(), a.toString());
            assertEquals(a, a.next().previous());
        }
    }

    @ParameterizedTest
    @CsvSource({
            "127.0.0.1, true, false", "127.255.0.9, true, false", "::1, true, false", "::ffff:127.0.0.1, true, false",
            "169.254.3.4, false, true", "fe80::1, false, true", "febf::1, false, true", "fec0::1, false, false",
            "10.1.2.3, false, false", "::2, false, false", "fd00::1, false, false"})
    void loopbackAndLinkLocalAsGo(String literal, boolean loopback, boolean linkLocal) {
        IpAddr a = IpAddr.parse(literal);
        assertEquals(loopback, a.isLoopback(), literal);
        assertEquals(linkLocal, a.isLinkLocalUnicast(), literal);
        // the kernel hands out IPv4-mapped addresses as 16 bytes, which parse() would have folded
        if (!a.isV6()) {
            byte[] mapped = new byte[16];
            mapped[10] = mapped[11] = (byte) 0xff;
            System.arraycopy(a.bytes(), 0, mapped, 12, 4);
            assertEquals(loopback, new IpAddr(mapped).isLoopback(), literal);
        }
    }
}
