package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** Message encoding and decoding without a kernel: no root, no native library. */
class CodecTest {

    /** Wraps a finished request as if the kernel had sent it. */
    private static NlMsg received(NlMessage m) {
        ByteBuffer b = m.finish(1, 0);
        ByteBuffer copy = ByteBuffer.allocate(b.remaining()).order(ByteOrder.nativeOrder());
        copy.put(b).flip();
        return new NlMsg(copy.getShort(4) & 0xffff, copy.getShort(6) & 0xffff, 1, 0, copy, 0, copy.limit());
    }

    @Test
    void headerAttributesAndPadding() {
        NlMessage m = new NlMessage(Rtm.RTM_NEWLINK, NetlinkSocket.NLM_F_CREATE)
                .u8(0).u8(0).u16(0).u32(0).u32(0).u32(0)
                .attrString(Rtm.IFLA_IFNAME, "eth0")  // 4 + 5 bytes, padded to 12
                .attrU32(Rtm.IFLA_MTU, 1500);
        ByteBuffer b = m.finish(7, 99);
        assertEquals(16 + 16 + 12 + 8, b.remaining());
        assertEquals(52, b.getInt(0));
        assertEquals(Rtm.RTM_NEWLINK, b.getShort(4));
        assertEquals(NetlinkSocket.NLM_F_CREATE, b.getShort(6));
        assertEquals(7, b.getInt(8));
        assertEquals(99, b.getInt(12));
        assertEquals(9, b.getShort(32), "attribute length excludes padding");
        assertEquals(Rtm.IFLA_IFNAME, b.getShort(34));
        assertEquals('e', b.get(36));
        assertEquals(0, b.get(40), "NUL terminator");
        assertEquals(8, b.getShort(44));
        assertEquals(1500, b.getInt(48));
    }

    @Test
    void nestedAttributesRoundTrip() {
        NlMessage m = new NlMessage(Rtm.RTM_NEWLINK, 0).u8(0).u8(0).u16(0).u32(5).u32(Link.IFF_UP).u32(0);
        m.attrString(Rtm.IFLA_IFNAME, "vx0");
        int info = m.nest(Rtm.IFLA_LINKINFO);
        m.attrString(Rtm.IFLA_INFO_KIND, "vxlan");
        int data = m.nest(Rtm.IFLA_INFO_DATA | NlMessage.NLA_F_NESTED);
        m.attrU32(Rtm.IFLA_VXLAN_ID, 42).attrBe16(Rtm.IFLA_VXLAN_PORT, 4789).attrU8(Rtm.IFLA_VXLAN_LEARNING, 0);
        m.end(data).end(info);
        m.attrU64(99, 1L << 40);

        NlMsg msg = received(m);
        NlAttrs a = msg.attrs(Rtm.IFINFOMSG_SIZE);
        assertEquals("vx0", a.string(Rtm.IFLA_IFNAME));
        NlAttrs li = a.nested(Rtm.IFLA_LINKINFO);
        assertEquals("vxlan", li.string(Rtm.IFLA_INFO_KIND));
        NlAttrs d = li.nested(Rtm.IFLA_INFO_DATA); // found although the NLA_F_NESTED bit is set
        assertEquals(42, d.u32(Rtm.IFLA_VXLAN_ID, -1));
        assertEquals(4789, d.be16(Rtm.IFLA_VXLAN_PORT, -1));
        assertEquals(0, d.u8(Rtm.IFLA_VXLAN_LEARNING, -1));
        assertEquals(1L << 40, a.u64(99, -1));
        assertEquals(-1, a.u32(Rtm.IFLA_MTU, -1), "absent attributes give the default");
        assertNull(a.string(Rtm.IFLA_IFALIAS));
        assertEquals(0, a.nested(Rtm.IFLA_PROTINFO).size());
    }

    @Test
    void truncatedAttributesStopParsingSafely() {
        ByteBuffer b = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder());
        b.putShort((short) 8).putShort((short) 1).putInt(77); // one good attribute
        b.putShort((short) 200).putShort((short) 2);           // claims more bytes than exist
        NlAttrs a = NlAttrs.parse(b, 0, 12);
        assertEquals(1, a.size());
        assertEquals(77, a.u32(1, 0));
        assertFalse(a.has(2));
    }

    @Test
    void linkDecodesFromAKernelStyleMessage() {
        NlMessage m = new NlMessage(Rtm.RTM_NEWLINK, 0)
                .u8(0).u8(0).u16(1).u32(12).u32(Link.IFF_UP | Link.IFF_PROMISC | Link.IFF_BROADCAST).u32(0);
        m.attrString(Rtm.IFLA_IFNAME, "eth0").attrU32(Rtm.IFLA_MTU, 1450)
                .attr(Rtm.IFLA_ADDRESS, MacAddress.parse("0a:58:0a:f4:00:07").bytes())
                .attrU32(Rtm.IFLA_MASTER, 3).attrU32(Rtm.IFLA_TXQLEN, 1000).attrU32(Rtm.IFLA_LINK, 13)
                .attrU32(Rtm.IFLA_LINK_NETNSID, 0).attrString(Rtm.IFLA_IFALIAS, "pod a").attrU8(Rtm.IFLA_OPERSTATE, 6)
                .attrU32(Rtm.IFLA_GROUP, 0x6a0004d2);
        int info = m.nest(Rtm.IFLA_LINKINFO);
        m.attrString(Rtm.IFLA_INFO_KIND, "veth").attrString(Rtm.IFLA_INFO_SLAVE_KIND, "bridge");
        m.end(info);

        Link l = Link.decode(received(m));
        assertEquals(new Link(12, "eth0", "veth", Link.IFF_UP | Link.IFF_PROMISC | Link.IFF_BROADCAST, 1450,
                MacAddress.parse("0a:58:0a:f4:00:07"), 3, 1000, 13, 0, "pod a", Link.OPER_UP, "bridge",
                0x6a0004d2), l);
        assertTrue(l.up());
        assertTrue(l.promisc());
        assertFalse(l.allmulti());
    }

    @Test
    void errorReplyBecomesErrnoExceptionWithExtendedAck() {
        // NLMSG_ERROR with a capped echo (just the request header) and an NLMSGERR_ATTR_MSG.
        NlMessage m = new NlMessage(2, NetlinkSocket.NLM_F_ACK_TLVS | NetlinkSocket.NLM_F_CAPPED)
                .u32(-Errno.EEXIST).u32(32).u16(Rtm.RTM_NEWLINK).u16(0).u32(1).u32(0);
        m.attrString(1, "Link already exists");
        ErrnoException e = received(m).errnoException(Errno.EEXIST, "add link veth0");
        assertEquals(Errno.EEXIST, e.errno());
        assertEquals("EEXIST", e.errnoName());
        assertEquals("add link veth0", e.operation());
        assertEquals("Link already exists", e.detail());
        assertEquals("add link veth0: EEXIST (File exists): Link already exists", e.getMessage());

        NlMessage plain = new NlMessage(2, 0).u32(-Errno.ENODEV).u32(16).u16(Rtm.RTM_DELLINK).u16(0).u32(1).u32(0);
        assertEquals("delete link eth9: ENODEV (No such device)",
                received(plain).errnoException(Errno.ENODEV, "delete link eth9").getMessage());
    }

    @Test
    void errnoTable() {
        assertEquals("EPERM", Errno.name(1));
        assertEquals("EEXIST", Errno.name(Errno.EEXIST));
        assertEquals("ENODEV", Errno.name(19));
        assertEquals("No such device", Errno.message(19));
        assertEquals("EOPNOTSUPP", Errno.name(95));
        assertEquals("EHWPOISON", Errno.name(133));
        assertEquals("E41", Errno.name(41));
        assertEquals("E9999", Errno.name(9999));
        assertEquals(Errno.EADDRNOTAVAIL, Errno.byName("EADDRNOTAVAIL"));
        assertEquals(-1, Errno.byName("ENOTREAL"));
        assertTrue(new ErrnoException(Errno.ESRCH, "x").is(Errno.ESRCH));
    }

    @Test
    void routeEncoding() throws Exception {
        IpAddr gw = IpAddr.parse("10.1.0.1");
        NlMessage add = new NlMessage(Rtm.RTM_NEWROUTE, 0);
        Route.defaultVia(gw).dev(4).metric(100).encode(add, false);
        NlMsg m = received(add);
        assertEquals(Family.INET.af(), m.u8(0));
        assertEquals(0, m.u8(1), "dst_len");
        assertEquals(Route.TABLE_MAIN, m.u8(4));
        assertEquals(Route.PROTO_BOOT, m.u8(5));
        assertEquals(Route.SCOPE_UNIVERSE, m.u8(6));
        assertEquals(Route.TYPE_UNICAST, m.u8(7));
        NlAttrs a = m.attrs(Rtm.RTMSG_SIZE);
        assertEquals(gw, a.address(Rtm.RTA_GATEWAY));
        assertEquals(4, a.u32(Rtm.RTA_OIF, 0));
        assertEquals(100, a.u32(Rtm.RTA_PRIORITY, 0));
        assertFalse(a.has(Rtm.RTA_DST));
        assertEquals(0, m.i32(8), "rtm_flags");

        NlMessage viaOnlink = new NlMessage(Rtm.RTM_NEWROUTE, 0);
        Route.to(Cidr.parse("10.5.2.0/24")).via(IpAddr.parse("10.5.2.0")).dev(7).onlink().encode(viaOnlink, false);
        assertEquals(Route.RTNH_F_ONLINK, received(viaOnlink).i32(8), "onlink travels in rtm_flags");

        NlMessage onLink = new NlMessage(Rtm.RTM_NEWROUTE, 0);
        Route.to(Cidr.parse("10.2.3.4/16")).dev(4).table(1000).mtu(1400).encode(onLink, false);
        NlMsg o = received(onLink);
        assertEquals(Route.SCOPE_LINK, o.u8(6), "no gateway: on-link, as iproute2 does");
        assertEquals(0, o.u8(4), "tables above 255 only travel in RTA_TABLE");
        NlAttrs oa = o.attrs(Rtm.RTMSG_SIZE);
        assertEquals(1000, oa.u32(Rtm.RTA_TABLE, 0));
        assertEquals(IpAddr.parse("10.2.0.0"), oa.address(Rtm.RTA_DST), "host bits cleared");
        assertEquals(1400, oa.nested(Rtm.RTA_METRICS).u32(Rtm.RTAX_MTU, 0));

        NlMessage del = new NlMessage(Rtm.RTM_DELROUTE, 0);
        Route.to(Cidr.parse("10.2.0.0/16")).encode(del, true);
        NlMsg d = received(del);
        assertEquals(Route.SCOPE_NOWHERE, d.u8(6), "delete matches any scope");
        assertEquals(0, d.u8(5), "and any protocol");
    }

    @Test
    void tbfParametersMatchTheReferencePlugin() {
        double tick = TbfParams.tickInUsec();
        TbfParams p = TbfParams.forBandwidth(1_000_000, 80_000);
        assertEquals(125_000, p.rateBytesPerSecond());
        assertEquals((int) (80_000 * tick), p.bufferTicks()); // 10 kB at 125 kB/s = 80 ms
        assertEquals(3_125 + 10_000, p.limitBytes());          // 25 ms at rate, plus the burst
        assertEquals(10_000, p.burstBytes());
        assertThrows(IllegalArgumentException.class, () -> TbfParams.forBandwidth(0, 1));
        assertThrows(IllegalArgumentException.class, () -> TbfParams.forBandwidth(1, -1));
        assertEquals(0x00010300, Tc.filterInfo(1, Tc.ETH_P_ALL));
        assertEquals("ffff:0", Tc.hex(Tc.HANDLE_INGRESS_QDISC));
    }

    /**
     * containerd's burst of 4294967295 bits: the Go plugin's uint32 conversions wrap the buffer, and
     * tc then shows "rate 10Mbit burst 193273526b lat 275s"; jcni must compute the same numbers.
     */
    @Test
    void containerdsBurstWrapsAsInTheGoPlugin() {
        org.junit.jupiter.api.Assumptions.assumeTrue(TbfParams.tickInUsec() == 15.625, "psched tick is not 15.625");
        TbfParams p = TbfParams.forBandwidth(10_000_000, 4294967295L);
        assertEquals(1_250_000, p.rateBytesPerSecond());
        assertEquals(2415919079L, Integer.toUnsignedLong(p.bufferTicks())); // 429496728 us × 15.625, low 32 bits
        assertEquals(193273526, p.burstBytes());
        assertEquals(31_250 + 536_870_911, p.limitBytes());
        // at 100 kbit/s the transmit time in microseconds wraps first, as uint32(float64) does in Go
        TbfParams slow = TbfParams.forBandwidth(100_000, 4294967295L);
        assertEquals(2684353310L, Integer.toUnsignedLong(slow.bufferTicks()));
    }

    @Test
    void addressesAndPrefixes() throws Exception {
        assertEquals(IpAddr.parse("10.1.2.255"), RtnlAddresses.broadcast(IpAddr.parse("10.1.2.3"), 24));
        assertEquals(IpAddr.parse("255.255.255.255"), RtnlAddresses.broadcast(IpAddr.parse("10.1.2.3"), 0));
        // The prefix forms the kernel API takes: host bits kept until a request clears them.
        Cidr p = Cidr.parse("fd00:1:2:3::7/64");
        assertEquals(64, p.prefix());
        assertEquals(Cidr.parse("fd00:1:2:3::/64"), p.masked());
        assertEquals(Cidr.parse("10.0.0.0/8"), Cidr.parse("10.9.8.7/8").masked());
        assertEquals(32, Cidr.host(IpAddr.parse("192.0.2.1")).prefix());
        assertEquals(Family.INET6, Family.of(p.address()));
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/33"));
        assertThrows(IllegalArgumentException.class, () -> IpAddr.parse("example.com"));
        MacAddress mac = MacAddress.parse("0A-58-0a-F4-00-07");
        assertEquals("0a:58:0a:f4:00:07", mac.toString());
        assertArrayEquals(new byte[] {0x0a, 0x58, 0x0a, (byte) 0xf4, 0, 7}, mac.bytes());
        assertThrows(IllegalArgumentException.class, () -> MacAddress.parse("zz:00"));
        assertThrows(IllegalArgumentException.class, () -> NewLink.veth("a-name-longer-than-15", "p"));
        assertThrows(IllegalStateException.class, () -> NewLink.bridge("br0").peerMtu(1500));
        assertEquals(MacvlanMode.BRIDGE, MacvlanMode.parse(""));
        assertEquals(MacvlanMode.PASSTHRU, MacvlanMode.parse("passthru"));
    }

    @Test
    void bridgeVlanRequestLayout() {
        NlMessage m = RtnlLinks.bridgeVlanRequest(Rtm.RTM_SETLINK, 7, 10, true, true, true);
        NlMsg msg = received(m);
        assertEquals(Family.AF_BRIDGE, msg.u8(0));
        assertEquals(7, msg.i32(4));
        NlAttrs spec = msg.attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_AF_SPEC);
        assertEquals(Rtm.BRIDGE_FLAGS_SELF, spec.u16(Rtm.IFLA_BRIDGE_FLAGS, -1));
        byte[] info = spec.bytes(Rtm.IFLA_BRIDGE_VLAN_INFO);
        ByteBuffer b = ByteBuffer.wrap(info).order(ByteOrder.nativeOrder());
        assertEquals(Rtm.BRIDGE_VLAN_INFO_PVID | Rtm.BRIDGE_VLAN_INFO_UNTAGGED, b.getShort(0));
        assertEquals(10, b.getShort(2));
        NlMessage port = RtnlLinks.bridgeVlanRequest(Rtm.RTM_DELLINK, 7, 20, false, false, false);
        assertFalse(received(port).attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_AF_SPEC).has(Rtm.IFLA_BRIDGE_FLAGS));
    }
}
