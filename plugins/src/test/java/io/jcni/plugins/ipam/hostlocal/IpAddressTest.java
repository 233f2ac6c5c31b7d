package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class IpAddressTest {

    /** Expected outputs are what Go's net.ParseIP(x).String() prints. */
    @ParameterizedTest
    @CsvSource({
        "10.1.2.3, 10.1.2.3",
        "0.0.0.0, 0.0.0.0",
        "255.255.255.255, 255.255.255.255",
        "2001:DB8:1::1, 2001:db8:1::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",
        "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
        "1:0:0:2:0:0:0:3, 1:0:0:2::3",
        "::, ::",
        "::1, ::1",
        "1::, 1::",
        "fe80:0:0:0:0:0:0:0, fe80::",
        "::ffff:1.2.3.4, 1.2.3.4",
        "::ffff:0102:0304, 1.2.3.4",
        "::1.2.3.4, ::102:304",
        "3ffe:ffff:0:01ff::0010, 3ffe:ffff:0:1ff::10",
        "1:2:3:4:5:6:1.2.3.4, 1:2:3:4:5:6:102:304",
    })
    void parsesAndPrintsLikeGo(String in, String out) {
        assertEquals(out, IpAddress.parse(in).toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.04", "256.1.1.1", "1.2.3.4 ", " 1.2.3.4",
        "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "fe80::1%eth0", "12345::", ":1::", "1:", "1:2:3:4:5:6:7",
        "a.b.c.d", "::1.2.3", "1.2.3.4::", "::g", "1:2:3:4:5:6:7:1.2.3.4", "example.com", "-1.2.3.4"})
    void rejectsWhatGoRejects(String in) {
        assertNull(IpAddress.tryParse(in));
        IpamException e = assertThrows(IpamException.class, () -> IpAddress.parse(in));
        assertEquals("invalid IP address: " + in, e.getMessage());
    }

    static LongStream seeds() {
        return LongStream.range(0, 20);
    }

    /** Property: printing then parsing is the identity, and agrees with the JDK's literal parser. */
    @ParameterizedTest
    @MethodSource("seeds")
    void roundTripsRandomAddresses(long seed) throws Exception {
        Random rnd = new Random(seed);
        for (int i = 0; i < 500; i++) {
            long hi = rnd.nextLong();
            long lo = rnd.nextLong();
            // sprinkle zero groups so that "::" compression is exercised
            for (int g = 0; g < 8; g++) {
                if (rnd.nextInt(3) == 0) {
                    if (g < 4) hi &= ~(0xFFFFL << (16 * g));
                    else lo &= ~(0xFFFFL << (16 * (g - 4)));
                }
            }
            IpAddress ip = IpAddress.v6(hi, lo);
            if (hi == 0 && (lo >>> 32) == 0xFFFF) continue; // mapped: prints as IPv4
            String text = ip.toString();
            assertEquals(ip, IpAddress.parse(text), text);
            assertEquals(text, text.toLowerCase());
            assertFalse(text.contains(":::"), text);
            byte[] jdk = InetAddress.getByName(text).getAddress();
            assertArrayEquals(ByteBuffer.allocate(16).putLong(hi).putLong(lo).array(), jdk, text);

            IpAddress v4 = IpAddress.v4(rnd.nextInt());
            assertEquals(v4, IpAddress.parse(v4.toString()));
            assertEquals(InetAddress.getByName(v4.toString()).getHostAddress(), v4.toString());
        }
    }

    @Test
    void rfc5952PicksTheFirstLongestZeroRun() {
        assertEquals("1:0:0:1::", IpAddress.parse("1:0:0:1:0:0:0:0").toString());
        assertEquals("1::1:0:0:1", IpAddress.parse("1:0:0:0:1:0:0:1").toString());
        assertEquals("1::1:0:0:1:1", IpAddress.parse("1:0:0:1:0:0:1:1").toString());
    }

    @Test
    void arithmeticAndOrdering() {
        assertEquals(IpAddress.parse("10.0.1.0"), IpAddress.parse("10.0.0.255").next());
        assertEquals(IpAddress.parse("0.0.0.0"), IpAddress.parse("255.255.255.255").next());
        assertEquals(IpAddress.parse("::1:0:0:0:0"), IpAddress.parse("::ffff:ffff:ffff:ffff").next());
        assertEquals(IpAddress.parse("::ffff:ffff:ffff:ffff"), IpAddress.parse("::1:0:0:0:0").previous());
        assertTrue(IpAddress.parse("10.0.0.2").compareTo(IpAddress.parse("10.0.0.10")) < 0);
        assertTrue(IpAddress.parse("255.0.0.0").compareTo(IpAddress.parse("::")) < 0);
        assertTrue(IpAddress.parse("8000::").compareTo(IpAddress.parse("7fff::")) > 0);
        assertEquals(IpAddress.parse("10.1.0.0"), IpAddress.parse("10.1.2.3").mask(16));
        assertEquals(IpAddress.parse("10.1.255.255"), IpAddress.parse("10.1.2.3").fillHostBits(16));
        assertEquals(IpAddress.parse("2001:db8:24:19fe::"), IpAddress.parse("2001:DB8:24:19ff::").mask(63));
    }

    @Test
    void cidrParsing() {
        Cidr c = Cidr.parse("10.1.2.3/24");
        assertEquals("10.1.2.3/24", c.toString());
        assertEquals(IpAddress.parse("10.1.2.0"), c.network());
        assertTrue(c.contains(IpAddress.parse("10.1.2.255")));
        assertFalse(c.contains(IpAddress.parse("10.1.3.0")));
        assertFalse(Cidr.parse("0.0.0.0/24").contains(IpAddress.parse("::1")));
        assertEquals("2001:db8:1::/64", Cidr.parse("2001:DB8:1::/64").toString());
        for (String bad : new String[] {"10.1.2.0", "10.1.2.0/33", "10.1.2.0/", "10.1.2.0/-1", "x/24", "::/129"}) {
            IpamException e = assertThrows(IpamException.class, () -> Cidr.parse(bad));
            assertEquals("invalid CIDR address: " + bad, e.getMessage());
        }
    }
}
