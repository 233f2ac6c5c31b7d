package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Address and CIDR parsing as host-local relies on it: {@link IpAddr} of the types module plus Gos CIDR rules. */
class AddressParsingTest {

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
        assertEquals(out, IpamConfig.parseIp(in).toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.04", "256.1.1.1", "1.2.3.4 ", " 1.2.3.4",
        "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "fe80::1%eth0", "12345::", ":1::", "1:", "1:2:3:4:5:6:7",
        "a.b.c.d", "::1.2.3", "1.2.3.4::", "::g", "1:2:3:4:5:6:7:1.2.3.4", "example.com", "-1.2.3.4"})
    void rejectsWhatGoRejects(String in) {
        assertNull(IpAddr.tryParse(in));
        CniException e = assertThrows(CniException.class, () -> IpamConfig.parseIp(in));
        assertEquals("invalid IP address: " + in, e.msg());
        assertEquals(ErrorCode.INVALID_NETWORK_CONFIG.code(), e.code());
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
            IpAddr ip = new IpAddr(ByteBuffer.allocate(16).putLong(hi).putLong(lo).array());
            if (hi == 0 && (lo >>> 32) == 0xFFFF) continue; // mapped: prints as IPv4
            String text = ip.toString();
            assertEquals(ip, IpAddr.parse(text), text);
            assertEquals(text, text.toLowerCase(Locale.ROOT));
            assertFalse(text.contains(":::"), text);
            byte[] jdk = InetAddress.getByName(text).getAddress();
            assertArrayEquals(ByteBuffer.allocate(16).putLong(hi).putLong(lo).array(), jdk, text);

            IpAddr v4 = new IpAddr(ByteBuffer.allocate(4).putInt(rnd.nextInt()).array());
            assertEquals(v4, IpAddr.parse(v4.toString()));
            assertEquals(InetAddress.getByName(v4.toString()).getHostAddress(), v4.toString());
        }
    }

    @Test
    void rfc5952PicksTheFirstLongestZeroRun() {
        assertEquals("1:0:0:1::", IpAddr.parse("1:0:0:1:0:0:0:0").toString());
        assertEquals("1::1:0:0:1", IpAddr.parse("1:0:0:0:1:0:0:1").toString());
        assertEquals("1::1:0:0:1:1", IpAddr.parse("1:0:0:1:0:0:1:1").toString());
    }

    @Test
    void arithmeticAndOrdering() {
        assertEquals(IpAddr.parse("10.0.1.0"), IpAddr.parse("10.0.0.255").next());
        assertEquals(IpAddr.parse("0.0.0.0"), IpAddr.parse("255.255.255.255").next());
        assertEquals(IpAddr.parse("::1:0:0:0:0"), IpAddr.parse("::ffff:ffff:ffff:ffff").next());
        assertEquals(IpAddr.parse("::ffff:ffff:ffff:ffff"), IpAddr.parse("::1:0:0:0:0").previous());
        assertTrue(IpAddr.parse("10.0.0.2").compareTo(IpAddr.parse("10.0.0.10")) < 0);
        assertTrue(IpAddr.parse("255.0.0.0").compareTo(IpAddr.parse("::")) < 0);
        assertTrue(IpAddr.parse("8000::").compareTo(IpAddr.parse("7fff::")) > 0);
        assertEquals(IpAddr.parse("10.1.0.0"), new Cidr(IpAddr.parse("10.1.2.3"), 16).network());
        assertEquals(IpAddr.parse("10.1.255.255"), new Cidr(IpAddr.parse("10.1.2.3"), 16).last());
        assertEquals(IpAddr.parse("2001:db8:24:19fe::"), new Cidr(IpAddr.parse("2001:DB8:24:19ff::"), 63).network());
    }

    @Test
    void cidrParsing() {
        Cidr c = IpamConfig.parseCidr("10.1.2.3/24");
        assertEquals("10.1.2.3/24", c.toString());
        assertEquals(IpAddr.parse("10.1.2.0"), c.network());
        assertTrue(c.contains(IpAddr.parse("10.1.2.255")));
        assertFalse(c.contains(IpAddr.parse("10.1.3.0")));
        assertFalse(IpamConfig.parseCidr("0.0.0.0/24").contains(IpAddr.parse("::1")));
        assertEquals("2001:db8:1::/64", IpamConfig.parseCidr("2001:DB8:1::/64").toString());
        assertEquals("10.1.2.0/8", IpamConfig.parseCidr("10.1.2.0/008").toString()); // Go's dtoi takes leading zeros
        for (String bad : new String[] {"10.1.2.0", "10.1.2.0/33", "10.1.2.0/", "10.1.2.0/-1", "x/24", "::/129"}) {
            CniException e = assertThrows(CniException.class, () -> IpamConfig.parseCidr(bad));
            assertEquals("invalid CIDR address: " + bad, e.msg());
        }
        assertEquals("IPNet IP and Mask version mismatch",
                assertThrows(CniException.class, () -> IpamConfig.parseCidr("::ffff:1.2.3.4/120")).msg());
    }
}
