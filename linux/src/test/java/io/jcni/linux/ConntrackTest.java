package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jcni.types.IpAddr;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** ctnetlink in a scratch namespace whose conntrack is switched on by an nft ct rule. */
@Tag("root")
class ConntrackTest {

    private static void udp(Scratch s, String to, int port) throws java.io.IOException {
        s.ns.exec(() -> {
            try (DatagramChannel c = DatagramChannel.open()) {
                c.send(ByteBuffer.wrap(new byte[] {1}), new InetSocketAddress(InetAddress.getByName(to), port));
            }
        });
    }

    @Test
    void listsAndDeletesOnlyTheFlowsToOnePort() throws Exception {
        try (Scratch s = Scratch.create(); Conntrack ct = Conntrack.open(s.ns)) {
            s.ip("link", "set", "lo", "up");
            Scratch.exec(List.of("ip", "netns", "exec", s.name, "nft",
                    "add table inet t; add chain inet t out { type filter hook output priority 0; }; add rule inet t out ct state new counter"));
            udp(s, "127.0.0.1", 5353);
            udp(s, "127.0.0.1", 5354);
            udp(s, "::1", 5353);

            List<Conntrack.Flow> v4 = ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353);
            assertEquals(1, v4.size(), v4.toString());
            assertEquals(IpAddr.parse("127.0.0.1"), v4.getFirst().dst());
            assertEquals(List.of(), ct.flowsTo(Family.INET, Conntrack.IPPROTO_TCP, 5353));

            assertEquals(1, ct.deleteFlowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353));
            assertEquals(List.of(), ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5353));
            assertFalse(ct.delete(v4.getFirst()), "already gone");
            // Not a flush: the other port and the other family keep their flows.
            assertEquals(1, ct.flowsTo(Family.INET, Conntrack.IPPROTO_UDP, 5354).size());
            assertEquals(1, ct.flowsTo(Family.INET6, Conntrack.IPPROTO_UDP, 5353).size());
            assertEquals(1, ct.deleteFlowsTo(Family.INET6, Conntrack.IPPROTO_UDP, 5353));
            assertEquals(List.of(), ct.flowsTo(Family.INET6, Conntrack.IPPROTO_UDP, 5353));
        }
    }

    @Test
    void aFlowWithoutATupleIsNeverSentSinceThatWouldFlushTheTable() {
        try (Scratch s = Scratch.create(); Conntrack ct = Conntrack.open(s.ns)) {
            Conntrack.Flow none = new Conntrack.Flow(Family.INET, 17, IpAddr.parse("127.0.0.1"),
                    IpAddr.parse("127.0.0.1"), 1, 2, new byte[0], 0);
            assertThrows(IllegalArgumentException.class, () -> ct.delete(none));
        }
    }
}
