package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * jcni's RTM_NEWLINK requests compared byte for byte with what iproute2 sends for the same
 * {@code ip link add}: the fixtures in src/test/resources/iproute2 were captured with strace by
 * capture.sh there (its header says how), among them the kinds this machine's kernel has no driver
 * for (ipvlan, vlan, dummy): iproute2 sends the request all the same and the kernel answers
 * EOPNOTSUPP. Only nlmsg_seq and nlmsg_pid (bytes 8..15) are ignored; the socket fills them per
 * request. In every fixture the parent p0 is ifindex 3. No root, no kernel needed.
 */
class NewLinkFixturesTest {
    private static final MacAddress MAC = MacAddress.parse("02:00:00:00:00:01");

    @Test
    void vlan() throws IOException {
        same("vlan", NewLink.vlan("x0", 3, 10));
        same("vlan-mtu", NewLink.vlan("x0", 3, 4094).mtu(1400));
    }

    @Test
    void ipvlanEveryMode() throws IOException {
        same("ipvlan-l2", NewLink.ipvlan("x0", 3, IpvlanMode.L2));
        same("ipvlan-l3", NewLink.ipvlan("x0", 3, IpvlanMode.L3));
        same("ipvlan-l3s", NewLink.ipvlan("x0", 3, IpvlanMode.L3S).mtu(1400));
    }

    @Test
    void dummy() throws IOException {
        same("dummy", NewLink.dummy("x0"));
    }

    @Test
    void macvlan() throws IOException {
        same("macvlan-bridge", NewLink.macvlan("x0", 3, MacvlanMode.BRIDGE));
        same("macvlan-passthru", NewLink.macvlan("x0", 3, MacvlanMode.PASSTHRU).mtu(1400).mac(MAC));
        // `ip link add ... netns NAME` opened the namespace as fd 4 and sent that number.
        same("macvlan-private-netns", NewLink.macvlan("x0", 3, MacvlanMode.PRIVATE).namespaceFd(4));
    }

    @Test
    void vethWithPeerMtu() throws IOException {
        same("veth", NewLink.veth("x0", "x1").mtu(1400).peerMtu(1300));
    }

    @Test
    void vethHostEndBornMarkedAsBridgeAndPtpCreateIt() throws IOException {
        // Veth.setup's request: up, in a birth group (IFLA_GROUP), a port of br0 (ifindex 4), the
        // peer in another namespace (fd 4 in ip's capture) with its MAC.
        same("veth-host-end", NewLink.veth("x0", "x1").up().group(0x6a0004d2).master(4).mtu(1400)
                .peerNamespaceFd(4).peerMac(MAC));
    }

    @Test
    void aBareKindHasNoInfoData() throws IOException {
        // jcni doctor probes kinds this way; "dummy" has no IFLA_INFO_DATA either, so the fixture applies.
        same("dummy", NewLink.ofKind("x0", "dummy"));
        for (String kind : new String[] {"ipvlan", "vlan", "macvlan"}) {
            ByteBuffer b = RtnlLinks.newLinkRequest(NewLink.ofKind("x0", kind)).finish(0, 0);
            NlAttrs info = asReceived(toArray(b)).attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_LINKINFO);
            assertEquals(kind, info.string(Rtm.IFLA_INFO_KIND));
            assertEquals(false, info.has(Rtm.IFLA_INFO_DATA), kind);
        }
    }

    private static byte[] toArray(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    @Test
    void kindSettingsDecodeFromTheKernelsAnswer() throws IOException {
        // The kernel's RTM_NEWLINK answer carries IFLA_LINKINFO in the same form as the request.
        assertEquals(10, LinkInfo.decode(asReceived(fixture("vlan"))).vlanId());
        assertEquals(IpvlanMode.L3S, LinkInfo.decode(asReceived(fixture("ipvlan-l3s"))).ipvlanMode());
        assertEquals(MacvlanMode.PASSTHRU, LinkInfo.decode(asReceived(fixture("macvlan-passthru"))).macvlanMode());
        assertEquals("dummy", LinkInfo.decode(asReceived(fixture("dummy"))).link().kind());
    }

    private static void same(String fixture, NewLink spec) throws IOException {
        byte[] want = fixture(fixture);
        ByteBuffer b = RtnlLinks.newLinkRequest(spec).finish(0, 0);
        b.putShort(6, (short) (b.getShort(6) | NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK)); // as request() sends it
        byte[] got = new byte[b.remaining()];
        b.get(got);
        assertEquals(hex(want), hex(got), fixture + ": " + command(fixture));
    }

    static NlMsg asReceived(byte[] bytes) {
        ByteBuffer copy = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        return new NlMsg(copy.getShort(4) & 0xffff, copy.getShort(6) & 0xffff, 0, 0, copy, 0, copy.limit());
    }

    /** The captured message, seq and pid zeroed. */
    static byte[] fixture(String name) throws IOException {
        byte[] b = HexFormat.of().parseHex(line(name).split("\t")[1].trim());
        for (int i = 8; i < 16; i++) b[i] = 0;
        return b;
    }

    static String command(String name) throws IOException {
        return line(name).split("\t")[0];
    }

    static String line(String name) throws IOException {
        try (InputStream in = NewLinkFixturesTest.class.getResourceAsStream("/iproute2/" + name + ".hex")) {
            if (in == null) throw new IOException("no fixture " + name);
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    /** Hex in 4-byte groups, so a failure shows where the two differ. */
    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < b.length; i++) s.append(String.format("%02x", b[i])).append(i % 4 == 3 ? " " : "");
        return s.toString().trim();
    }
}
