package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class DhcpClientTest {
    static final byte[] MAC = {2, 0, 0, 0, 0, 7};
    final ClientIdentity id = new ClientIdentity(ClientIdentity.clientId("c1", "net", "eth0"), MAC, List.of(1, 3, 121),
            Map.of(DhcpOptions.HOST_NAME, "pod-a".getBytes(StandardCharsets.US_ASCII)));

    DhcpClient client(FakeServer s) {
        return new DhcpClient(s, id, s::clock, RandomGenerator.of("L64X128MixRandom"));
    }

    @Test
    void acquireIsDiscoverOfferRequestAck() throws Exception {
        FakeServer s = new FakeServer();
        DhcpMessage ack = client(s).acquire(null, 10_000);
        assertEquals(DhcpOptions.ACK, ack.type());
        assertArrayEquals(FakeServer.OFFERED, ack.yiaddr());
        assertEquals(List.of(DhcpOptions.DISCOVER, DhcpOptions.REQUEST), s.sentTypes());
        DhcpMessage discover = s.sent.get(0).message(), request = s.sent.get(1).message();
        assertArrayEquals(DhcpMessage.BROADCAST, s.sent.get(0).to());
        assertArrayEquals(DhcpMessage.BROADCAST, s.sent.get(1).to());
        assertEquals(discover.xid(), request.xid(), "REQUEST in SELECTING keeps the DISCOVER's xid");
        assertEquals(DhcpMessage.BROADCAST_FLAG, discover.flags(), "no address yet: replies must be broadcast");
        assertArrayEquals(FakeServer.OFFERED, request.option(DhcpOptions.REQUESTED_IP));
        assertArrayEquals(FakeServer.SERVER, request.option(DhcpOptions.SERVER_ID));
        assertArrayEquals(DhcpMessage.ZERO, request.ciaddr());
        byte[] cid = request.option(DhcpOptions.CLIENT_ID);
        assertEquals(0, cid[0], "client id type 0, as the reference sends it");
        assertEquals("c1/net/eth0", new String(cid, 1, cid.length - 1, StandardCharsets.UTF_8));
        assertArrayEquals(new byte[] {1, 3, 121}, request.option(DhcpOptions.PARAMETER_REQUEST_LIST));
        assertEquals("pod-a", DhcpOptions.text(request.option(DhcpOptions.HOST_NAME)));
        assertArrayEquals(MAC, request.chaddr());
    }

    @Test
    void everyDiscoverAndRequestSaysHowLongAMessageMayBe() throws Exception {
        FakeServer s = new FakeServer();
        client(s).acquire(null, 10_000);
        client(s).extend(new IpAddr(FakeServer.OFFERED), new IpAddr(FakeServer.SERVER), 5_000);
        for (FakeServer.Sent m : s.sent) {
            assertArrayEquals(new byte[] {0x40, 0}, m.message().option(DhcpOptions.MAX_MESSAGE_SIZE), "option 57: 16384");
        }
        client(s).release(new IpAddr(FakeServer.OFFERED), new IpAddr(FakeServer.SERVER));
        assertNull(s.sent.getLast().message().option(DhcpOptions.MAX_MESSAGE_SIZE), "not in RELEASE (RFC 2131 table 5)");
    }

    @Test
    void aLongOfferIsAccepted() throws Exception {
        FakeServer s = new FakeServer();
        java.util.List<DhcpOptions.Route> routes = new java.util.ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            routes.add(new DhcpOptions.Route(io.jcni.types.Cidr.parse("10." + (100 + i / 250) + "." + (i % 250) + ".0/25"),
                    new IpAddr(FakeServer.SERVER)));
        }
        s.ackOptions.put(DhcpOptions.CLASSLESS_ROUTES, DhcpOptions.encodeClasslessRoutes(routes));
        DhcpMessage ack = client(s).acquire(null, 10_000);
        assertTrue(ack.encode().length > 9000, "a 9 KB message: " + ack.encode().length);
        assertEquals(1000, DhcpOptions.classlessRoutes(ack.option(DhcpOptions.CLASSLESS_ROUTES)).size());
    }

    @Test
    void anUnreadableOfferIsReportedAsSuch() {
        FakeServer s = new FakeServer() {
            @Override
            public Received receive(long millis) {
                Received r = super.receive(millis);
                if (r == null) return null;
                byte[] cut = java.util.Arrays.copyOf(r.data(), r.data().length - 1);
                return new Received(r.from(), cut, 20_000); // longer than option 57 allows: the client read only part of it
            }
        };
        DhcpException e = assertThrows(DhcpException.class, () -> client(s).acquire(null, 3_000));
        assertEquals(DhcpException.Kind.UNREADABLE, e.kind());
        assertTrue(e.getMessage().startsWith("unreadable DHCPOFFER from 10.9.0.1: a message of 20000 bytes, longer than the 16384"),
                e.getMessage());
    }

    @Test
    void aBrokenOfferIsReportedAsSuch() {
        FakeServer s = new FakeServer() {
            @Override
            public Received receive(long millis) {
                Received r = super.receive(millis);
                if (r == null) return null;
                byte[] d = r.data().clone();
                // The last option before END claims more bytes than the message has.
                int end = d.length - 1;
                while (d[end] != (byte) DhcpOptions.END) end--;
                byte[] broken = java.util.Arrays.copyOf(d, end + 3);
                broken[end] = (byte) DhcpOptions.CLASSLESS_ROUTES;
                broken[end + 1] = (byte) 200;
                broken[end + 2] = 24;
                return new Received(r.from(), broken);
            }
        };
        DhcpException e = assertThrows(DhcpException.class, () -> client(s).acquire(null, 3_000));
        assertTrue(e.getMessage().startsWith("unreadable DHCPOFFER from 10.9.0.1: option 121 overruns the message"), e.getMessage());
    }

    @Test
    void aNakRestartsAtInit() throws Exception {
        FakeServer s = new FakeServer();
        s.naks = 1;
        DhcpMessage ack = client(s).acquire(null, 10_000);
        assertEquals(DhcpOptions.ACK, ack.type());
        assertEquals(List.of(DhcpOptions.DISCOVER, DhcpOptions.REQUEST, DhcpOptions.DISCOVER, DhcpOptions.REQUEST), s.sentTypes());
    }

    @Test
    void noServerFailsAtTheDeadlineAfterResending() {
        FakeServer s = new FakeServer();
        s.ignore.add(DhcpOptions.DISCOVER);
        long t0 = s.now;
        DhcpException e = assertThrows(DhcpException.class, () -> client(s).acquire(null, 5_000));
        assertEquals(DhcpException.Kind.TIMEOUT, e.kind());
        assertTrue(e.getMessage().contains("no DHCPOFFER"), e.getMessage());
        assertEquals(t0 + 5_000, s.now, "bounded by the timeout");
        assertEquals(5, s.sent.size(), "sent at 0, 0.25, 0.75, 1.75 and 3.75 s (the next at 7.75 s is past the end): " + s.sentTypes());
    }

    @Test
    void renewIsUnicastToTheServerWithCiaddrAndRebindIsBroadcast() throws Exception {
        FakeServer s = new FakeServer();
        IpAddr mine = new IpAddr(FakeServer.OFFERED);
        client(s).extend(mine, new IpAddr(FakeServer.SERVER), 5_000);
        DhcpMessage renew = s.sent.getFirst().message();
        assertArrayEquals(FakeServer.SERVER, s.sent.getFirst().to());
        assertArrayEquals(FakeServer.OFFERED, renew.ciaddr());
        assertNull(renew.option(DhcpOptions.REQUESTED_IP), "RENEWING must not send option 50 (RFC 2131 table 5)");
        assertNull(renew.option(DhcpOptions.SERVER_ID), "nor option 54");
        assertEquals(0, renew.flags());
        client(s).extend(mine, null, 5_000);
        assertArrayEquals(DhcpMessage.BROADCAST, s.sent.get(1).to());
    }

    @Test
    void renewNakIsReported() {
        FakeServer s = new FakeServer();
        s.naks = 1;
        DhcpException e = assertThrows(DhcpException.class,
                () -> client(s).extend(new IpAddr(FakeServer.OFFERED), new IpAddr(FakeServer.SERVER), 5_000));
        assertEquals(DhcpException.Kind.NAK, e.kind());
        assertTrue(e.getMessage().contains("wrong network"), e.getMessage());
    }

    @Test
    void releaseGoesToTheGrantingServer() {
        FakeServer s = new FakeServer();
        client(s).release(new IpAddr(FakeServer.OFFERED), new IpAddr(FakeServer.SERVER));
        DhcpMessage m = s.sent.getFirst().message();
        assertEquals(DhcpOptions.RELEASE, m.type());
        assertArrayEquals(FakeServer.SERVER, s.sent.getFirst().to());
        assertArrayEquals(FakeServer.SERVER, m.option(DhcpOptions.SERVER_ID));
        assertArrayEquals(FakeServer.OFFERED, m.ciaddr());
    }

    @Test
    void releaseIsBroadcastWhenTheServerIsUnreachable() {
        FakeServer s = new FakeServer() {
            @Override
            public void send(byte[] to, byte[] message) {
                if (!java.util.Arrays.equals(to, DhcpMessage.BROADCAST)) throw new IllegalStateException("ENETUNREACH");
                super.send(to, message);
            }
        };
        client(s).release(new IpAddr(FakeServer.OFFERED), new IpAddr(FakeServer.SERVER));
        assertArrayEquals(DhcpMessage.BROADCAST, s.sent.getFirst().to());
        assertArrayEquals(FakeServer.SERVER, s.sent.getFirst().message().option(DhcpOptions.SERVER_ID));
    }

    @Test
    void repliesForOtherClientsAreIgnored() throws Exception {
        FakeServer s = new FakeServer() {
            @Override
            public Received receive(long millis) {
                Received r = super.receive(millis);
                if (r == null) return null;
                byte[] other = r.data().clone();
                other[28] ^= 1; // another chaddr
                return new Received(r.from(), other);
            }
        };
        assertThrows(DhcpException.class, () -> client(s).acquire(null, 3_000));
    }
}
