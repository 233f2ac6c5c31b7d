package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DhcpMessageTest {

    @Test
    void encodesTheBootpHeaderAtItsOffsets() {
        Map<Integer, byte[]> opts = new LinkedHashMap<>();
        opts.put(DhcpOptions.MESSAGE_TYPE, new byte[] {DhcpOptions.DISCOVER});
        byte[] b = new DhcpMessage(1, 0x01020304, 7, DhcpMessage.BROADCAST_FLAG, new byte[] {1, 1, 1, 1}, null, null, null,
                new byte[] {2, 0, 0, 0, 0, 9}, opts).encode();
        assertEquals(300, b.length, "padded to the BOOTP minimum");
        assertEquals(1, b[0]);
        assertEquals(1, b[1], "htype Ethernet");
        assertEquals(6, b[2], "hlen");
        assertArrayEquals(new byte[] {1, 2, 3, 4}, java.util.Arrays.copyOfRange(b, 4, 8));
        assertEquals(7, b[9]);
        assertEquals((byte) 0x80, b[10], "broadcast flag is the top bit");
        assertArrayEquals(new byte[] {1, 1, 1, 1}, java.util.Arrays.copyOfRange(b, 12, 16));
        assertEquals(9, b[33], "chaddr at 28");
        assertArrayEquals(new byte[] {99, (byte) 130, 83, 99}, java.util.Arrays.copyOfRange(b, 236, 240));
        assertArrayEquals(new byte[] {53, 1, 1, (byte) 255}, java.util.Arrays.copyOfRange(b, 240, 244));
    }

    @Test
    void roundTripsAndSplitsLongOptions() {
        Map<Integer, byte[]> opts = new LinkedHashMap<>();
        opts.put(DhcpOptions.MESSAGE_TYPE, new byte[] {DhcpOptions.ACK});
        byte[] big = new byte[300];
        for (int i = 0; i < big.length; i++) big[i] = (byte) i;
        opts.put(DhcpOptions.CLASSLESS_ROUTES, big);
        opts.put(DhcpOptions.HOST_NAME, new byte[0]);
        DhcpMessage m = new DhcpMessage(2, -5, 0, 0, null, new byte[] {10, 0, 0, 5}, null, null, new byte[] {1, 2, 3, 4, 5, 6}, opts);
        DhcpMessage back = DhcpMessage.decode(m.encode());
        assertEquals(-5, back.xid());
        assertEquals(DhcpOptions.ACK, back.type());
        assertArrayEquals(big, back.option(DhcpOptions.CLASSLESS_ROUTES), "split into 255 + 45 and joined again (RFC 3396)");
        assertArrayEquals(new byte[0], back.option(DhcpOptions.HOST_NAME));
        assertArrayEquals(new byte[] {10, 0, 0, 5}, back.yiaddr());
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6}, back.chaddr());
    }

    @Test
    void rejectsWhatIsNotDhcp() {
        assertThrows(IllegalArgumentException.class, () -> DhcpMessage.decode(new byte[100]));
        assertThrows(IllegalArgumentException.class, () -> DhcpMessage.decode(new byte[300]), "no magic cookie");
        byte[] b = new DhcpMessage(2, 1, 0, 0, null, null, null, null, new byte[6], Map.of()).encode();
        b[240] = 3;
        b[241] = 100; // an option longer than the message
        assertThrows(IllegalArgumentException.class, () -> DhcpMessage.decode(b));
    }

    @Test
    void classlessRoutesAsRfc3442() {
        // 0/0 via 10.0.0.1; 10.17/16 via 10.0.0.2; 192.168.5.0/24 via 0.0.0.0 (on-link)
        byte[] v = {0, 10, 0, 0, 1, 16, 10, 17, 10, 0, 0, 2, 24, (byte) 192, (byte) 168, 5, 0, 0, 0, 0};
        List<DhcpOptions.Route> r = DhcpOptions.classlessRoutes(v);
        assertEquals(List.of(
                new DhcpOptions.Route(Cidr.parse("0.0.0.0/0"), IpAddr.parse("10.0.0.1")),
                new DhcpOptions.Route(Cidr.parse("10.17.0.0/16"), IpAddr.parse("10.0.0.2")),
                new DhcpOptions.Route(Cidr.parse("192.168.5.0/24"), IpAddr.parse("0.0.0.0"))), r);
        assertArrayEquals(v, DhcpOptions.encodeClasslessRoutes(r));
        assertEquals(List.of(), DhcpOptions.classlessRoutes(new byte[] {24, 10, 0}), "truncated: none at all");
        assertEquals(List.of(), DhcpOptions.classlessRoutes(new byte[] {33, 0, 0, 0, 0, 0, 0, 0, 0}), "width over 32");
    }

    @Test
    void masksAndNumbers() {
        assertEquals(24, DhcpOptions.prefixLength(new byte[] {(byte) 255, (byte) 255, (byte) 255, 0}));
        assertEquals(0, DhcpOptions.prefixLength(new byte[4]));
        assertEquals(-1, DhcpOptions.prefixLength(new byte[] {(byte) 255, 0, (byte) 255, 0}));
        assertEquals(4294967295L, DhcpOptions.seconds(new byte[] {-1, -1, -1, -1}));
        assertEquals(-1, DhcpOptions.seconds(new byte[3]));
        assertEquals(List.of(new DhcpOptions.Route(Cidr.parse("10.0.0.0/8"), IpAddr.parse("1.1.1.1"))),
                DhcpOptions.staticRoutes(new byte[] {10, 0, 0, 0, 1, 1, 1, 1}));
        assertEquals("example.org", DhcpOptions.text(new byte[] {'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'o', 'r', 'g', 0}));
    }

    @Test
    void aGlimpseOfABrokenMessageReadsItsHeaderAndType() {
        java.util.Map<Integer, byte[]> o = new java.util.LinkedHashMap<>();
        o.put(DhcpOptions.MESSAGE_TYPE, new byte[] {DhcpOptions.OFFER});
        o.put(DhcpOptions.CLASSLESS_ROUTES, new byte[200]);
        byte[] whole = new DhcpMessage(DhcpMessage.BOOTREPLY, 0x1234, 0, 0, null, null, null, null, new byte[] {2, 0, 0, 0, 0, 9}, o).encode();
        byte[] cut = java.util.Arrays.copyOf(whole, 300);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> DhcpMessage.decode(cut));
        DhcpMessage.Glimpse g = DhcpMessage.glimpse(cut);
        org.junit.jupiter.api.Assertions.assertEquals(DhcpMessage.BOOTREPLY, g.op());
        org.junit.jupiter.api.Assertions.assertEquals(0x1234, g.xid());
        org.junit.jupiter.api.Assertions.assertArrayEquals(new byte[] {2, 0, 0, 0, 0, 9}, g.chaddr());
        org.junit.jupiter.api.Assertions.assertEquals(DhcpOptions.OFFER, g.type());
        org.junit.jupiter.api.Assertions.assertNull(DhcpMessage.glimpse(new byte[100]), "not even a header");
    }
}
