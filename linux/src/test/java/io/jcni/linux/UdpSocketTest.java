package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
                byte[] got = null;
                // The link may drop the first frames until the kernel has handled its carrier.
                for (int i = 0; i < 40 && got == null; i++) {
                    tx.send(BROADCAST, 6767, hello); // from this (test) thread: the socket stays in a's namespace
                    got = rx.receive(100);
                }
                assertArrayEquals(hello, got);
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
