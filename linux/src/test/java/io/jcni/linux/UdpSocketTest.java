package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** A broadcast between two namespaces over a veth whose ends have no address and no route: what a DHCP client does. */
@Tag("root")
class UdpSocketTest {
    static final byte[] BROADCAST = {(byte) 255, (byte) 255, (byte) 255, (byte) 255};

    @Test
    void broadcastsFromAnInterfaceWithoutAnAddress() throws Exception {
        try (Scratch a = Scratch.create(); Scratch b = Scratch.create()) {
            a.rt.addVeth("eth0", "peer0", b.ns, 1500, null);
            a.rt.setUp(a.rt.link("eth0").index());
            b.rt.setUp(b.rt.link("peer0").index());
            try (UdpSocket rx = b.ns.run(() -> UdpSocket.bindToDevice("peer0", 6767));
                 UdpSocket tx = a.ns.run(() -> UdpSocket.bindToDevice("eth0", 6868))) {
                assertEquals("eth0", tx.device());
                byte[] hello = "hello".getBytes(StandardCharsets.US_ASCII);
                UdpSocket.Datagram got = null;
                // The link may drop the first frames until the kernel has handled its carrier.
                for (int i = 0; i < 40 && got == null; i++) {
                    tx.send(BROADCAST, 6767, hello); // from this (test) thread: the socket stays in a's namespace
                    got = rx.receive(100, 1500);
                }
                assertArrayEquals(hello, got.data());
                assertArrayEquals(new byte[4], got.from(), "sent before eth0 had an address: from 0.0.0.0");

                // Larger than the MTU: fragmented and reassembled; cut to what the receiver asks for, and said so.
                byte[] big = new byte[9000];
                for (int i = 0; i < big.length; i++) big[i] = (byte) i;
                tx.send(BROADCAST, 6767, big);
                UdpSocket.Datagram whole = rx.receive(2000, 16384);
                assertArrayEquals(big, whole.data());
                tx.send(BROADCAST, 6767, big);
                UdpSocket.Datagram cut = rx.receive(2000, 1000);
                assertEquals(1000, cut.data().length);
                assertEquals(9000, cut.length());
                assertTrue(cut.truncated());
            }
        }
    }

    @Test
    void aMissingDeviceIsAnErrnoException() {
        try (Scratch a = Scratch.create()) {
            ErrnoException e = assertThrows(ErrnoException.class, () -> a.ns.run(() -> UdpSocket.bindToDevice("nosuch0", 6868)));
            assertEquals("ENODEV", e.errnoName());
        }
    }
}
