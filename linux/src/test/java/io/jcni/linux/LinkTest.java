package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class LinkTest {

    private static Map<String, Object> ipLink(Scratch s, String name) {
        return s.ipJson("-d", "link", "show", "dev", name).getFirst();
    }

    @SuppressWarnings("unchecked")
    private static List<String> flags(Map<String, Object> link) {
        return (List<String>) (List<?>) Json.asList(link.get("flags"));
    }

    private static Map<String, Object> info(Map<String, Object> link) {
        return Json.asObject(link.get("linkinfo"));
    }

    @Test
    void aGroupOfLinksIsDeletedByOneRequestAndOnlyThatGroup() {
        try (Scratch container = Scratch.create(); Scratch host = Scratch.create()) {
            container.rt.addVeth("eth0", "vg0", host.ns, 1500, null);
            container.rt.addVeth("eth1", "vg1", host.ns, 1500, null);
            container.rt.addVeth("eth2", "vg2", host.ns, 1500, null);
            host.rt.setGroup(host.rt.link("vg0").index(), 77);
            host.rt.setGroup(host.rt.link("vg2").index(), 77);
            assertEquals(77L, ipLink(host, "vg0").get("group") instanceof Number n ? n.longValue()
                    : Long.parseLong(String.valueOf(ipLink(host, "vg0").get("group"))));
            host.rt.deleteGroup(77);
            assertTrue(host.rt.findLink("vg0").isEmpty());
            assertTrue(host.rt.findLink("vg2").isEmpty());
            assertTrue(container.rt.findLink("eth0").isEmpty(), "a veth's peer goes with it");
            assertTrue(host.rt.findLink("vg1").isPresent(), "the default group is untouched");
            assertTrue(container.rt.findLink("eth1").isPresent());
            ErrnoException none = assertThrows(ErrnoException.class, () -> host.rt.deleteGroup(77));
            assertTrue(none.is(Errno.ENODEV), none.getMessage());
        }
    }

    @Test
    void vethWithPeerCreatedInAnotherNamespace() {
        try (Scratch container = Scratch.create(); Scratch host = Scratch.create()) {
            MacAddress mac = MacAddress.parse("02:42:ac:11:00:02");
            container.rt.addVeth("eth0", "veth1234", host.ns, 1400, mac);

            Link eth0 = container.rt.link("eth0");
            assertEquals("veth", eth0.kind());
            assertEquals(1400, eth0.mtu());
            assertEquals(mac, eth0.mac());
            assertFalse(eth0.up());
            assertTrue(eth0.linkNetnsId() >= 0, "peer lives in another namespace");
            assertTrue(container.rt.findLink("veth1234").isEmpty());

            Link peer = host.rt.link("veth1234");
            assertEquals(1400, peer.mtu(), "the peer inherits the MTU");
            assertEquals(peer.index(), eth0.linkIndex());
            assertEquals(eth0.index(), peer.linkIndex());

            Map<String, Object> j = ipLink(container, "eth0");
            assertEquals("veth", info(j).get("info_kind"));
            assertEquals(1400L, j.get("mtu"));
            assertEquals("02:42:ac:11:00:02", j.get("address"));
            assertEquals(((Number) j.get("ifindex")).intValue(), eth0.index());
            assertEquals(1400L, ipLink(host, "veth1234").get("mtu"));
        }
    }

    @Test
    void vethBothEndsLocalThenMoved() {
        try (Scratch a = Scratch.create(); Scratch b = Scratch.create()) {
            a.rt.addLink(NewLink.veth("va", "vb").mtu(9000).peerMtu(1500).txqlen(500).up());
            Link va = a.rt.link("va");
            Link vb = a.rt.link("vb");
            assertTrue(va.up());
            assertEquals(9000, va.mtu());
            assertEquals(1500, vb.mtu());
            assertEquals(500, va.txqlen());
            assertEquals(vb.index(), va.linkIndex());

            a.rt.setNamespace(vb.index(), b.ns);
            assertTrue(a.rt.findLink("vb").isEmpty());
            assertEquals("veth", b.rt.link("vb").kind());
            assertEquals(1, b.ipJson("link", "show", "dev", "vb").size());
        }
    }

    @Test
    void setAttributes() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("v0", "v1"));
            int v0 = s.rt.link("v0").index();

            s.rt.setUp(v0);
            assertTrue(s.rt.link(v0).up());
            assertTrue(flags(ipLink(s, "v0")).contains("UP"));
            s.rt.setDown(v0);
            assertFalse(s.rt.link(v0).up());
            assertFalse(flags(ipLink(s, "v0")).contains("UP"));

            s.rt.setMtu(v0, 1280);
            MacAddress mac = MacAddress.parse("0a:58:0a:f4:00:07");
            s.rt.setMac(v0, mac);
            s.rt.setTxqlen(v0, 77);
            s.rt.setPromisc(v0, true);
            s.rt.setAllmulti(v0, true);
            s.rt.setAlias(v0, "container side");
            Link l = s.rt.link(v0);
            assertEquals(1280, l.mtu());
            assertEquals(mac, l.mac());
            assertEquals(77, l.txqlen());
            assertTrue(l.promisc());
            assertTrue(l.allmulti());
            assertEquals("container side", l.alias());
            Map<String, Object> j = ipLink(s, "v0");
            assertEquals(1280L, j.get("mtu"));
            assertEquals(mac.toString(), j.get("address"));
            assertEquals(77L, j.get("txqlen"));
            assertTrue(flags(j).contains("PROMISC"));
            assertTrue(flags(j).contains("ALLMULTI"));
            assertEquals("container side", j.get("ifalias"));

            s.rt.setPromisc(v0, false);
            s.rt.setAllmulti(v0, false);
            assertFalse(s.rt.link(v0).promisc());
            assertFalse(s.rt.link(v0).allmulti());

            s.rt.rename(v0, "eth7");
            assertEquals(v0, s.rt.link("eth7").index());
            assertTrue(s.rt.findLink("v0").isEmpty());
        }
    }

    @Test
    void bridgeMasterAndPortOptions() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.bridge("cni0").mtu(1450).up());
            s.rt.addLink(NewLink.veth("vp0", "vp1"));
            Link br = s.rt.link("cni0");
            Link port = s.rt.link("vp0");
            assertEquals("bridge", br.kind());
            assertTrue(br.up());

            s.rt.setMaster(port.index(), br.index());
            Link enslaved = s.rt.link(port.index());
            assertEquals(br.index(), enslaved.masterIndex());
            assertEquals("bridge", enslaved.slaveKind());
            assertEquals("cni0", ipLink(s, "vp0").get("master"));

            s.rt.setHairpin(port.index(), true);
            s.rt.setIsolated(port.index(), true);
            BridgePort bp = s.rt.bridgePort(port.index());
            assertTrue(bp.hairpin());
            assertTrue(bp.isolated());
            Map<String, Object> slave = Json.asObject(info(ipLink(s, "vp0")).get("info_slave_data"));
            assertEquals(true, slave.get("hairpin"));
            assertEquals(true, slave.get("isolated"));

            s.rt.setHairpin(port.index(), false);
            assertFalse(s.rt.bridgePort(port.index()).hairpin());

            s.rt.setNoMaster(port.index());
            assertEquals(0, s.rt.link(port.index()).masterIndex());
            assertNull(ipLink(s, "vp0").get("master"));
            assertEquals(Errno.ENODEV, assertThrows(ErrnoException.class, () -> s.rt.bridgePort(port.index())).errno());
        }
    }

    @Test
    void macvlanModesOnAParentCreatedInTheTargetNamespace() {
        try (Scratch host = Scratch.create(); Scratch container = Scratch.create()) {
            host.rt.addLink(NewLink.veth("uplink", "uplink-peer"));
            int parent = host.rt.link("uplink").index();
            for (MacvlanMode mode : MacvlanMode.values()) {
                if (mode == MacvlanMode.PASSTHRU) continue; // one passthru per parent; tested below
                String name = "mv-" + mode.name().toLowerCase(Locale.ROOT);
                host.rt.addLink(NewLink.macvlan(name, parent, mode).mtu(1400));
                Map<String, Object> data = Json.asObject(info(ipLink(host, name)).get("info_data"));
                assertEquals(mode.name().toLowerCase(Locale.ROOT), data.get("mode"));
                assertEquals("macvlan", host.rt.link(name).kind());
                assertEquals(parent, host.rt.link(name).linkIndex());
            }
            // As the macvlan plugin does: born on the host parent, directly inside the container.
            host.rt.addLink(NewLink.macvlan("eth0", parent, MacvlanMode.BRIDGE).namespace(container.ns));
            assertEquals("macvlan", container.rt.link("eth0").kind());
            assertTrue(host.rt.findLink("eth0").isEmpty());

            host.rt.addLink(NewLink.veth("up2", "up2-peer"));
            host.rt.addLink(NewLink.macvlan("mv-pt", host.rt.link("up2").index(), MacvlanMode.PASSTHRU));
            assertEquals("passthru", Json.asObject(info(ipLink(host, "mv-pt")).get("info_data")).get("mode"));
        }
    }

    @Test
    void linkInfoReportsTheMacvlanModeAndMissingDriversAreEopnotsupp() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("par0", "par1"));
            int parent = s.rt.link("par0").index();
            s.rt.addLink(NewLink.macvlan("mvp0", parent, MacvlanMode.PRIVATE).macvlanBcQueueLen(500));
            assertEquals(MacvlanMode.PRIVATE, s.rt.linkInfo("mvp0").macvlanMode());
            assertEquals(-1, s.rt.linkInfo("mvp0").vlanId());
            // Each kind either works here or is refused as unknown; either way nothing is left behind.
            for (NewLink l : new NewLink[] {NewLink.ipvlan("k0", parent, IpvlanMode.L3), NewLink.vlan("k0", parent, 7), NewLink.dummy("k0")}) {
                try {
                    s.rt.addLink(l);
                    LinkInfo info = s.rt.linkInfo("k0");
                    assertEquals(l.kind(), info.link().kind());
                    if (l.kind().equals("vlan")) assertEquals(7, info.vlanId());
                    if (l.kind().equals("ipvlan")) assertEquals(IpvlanMode.L3, info.ipvlanMode());
                    s.rt.deleteLink("k0");
                } catch (ErrnoException e) {
                    assertEquals(Errno.EOPNOTSUPP, e.errno(), e.getMessage());
                    assertTrue(s.rt.findLink("k0").isEmpty());
                }
            }
        }
    }

    @Test
    void vxlanAndIfb() throws Exception {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("under0", "under1"));
            int under = s.rt.link("under0").index();
            s.rt.addAddress(under, IpAddr.parse("192.0.2.10"), 24, false);
            s.rt.addLink(NewLink.vxlan("vx42", 42).vxlanLocal(IpAddr.parse("192.0.2.10"))
                    .vxlanPort(4789).vxlanDev(under).vxlanLearning(false).mtu(1450));
            Link vx = s.rt.link("vx42");
            assertEquals("vxlan", vx.kind());
            assertEquals(1450, vx.mtu());
            Map<String, Object> data = Json.asObject(info(ipLink(s, "vx42")).get("info_data"));
            assertEquals(42L, data.get("id"));
            assertEquals("192.0.2.10", data.get("local"));
            assertEquals(4789L, data.get("port"));
            assertEquals("under0", data.get("link"));
            assertEquals(false, data.get("learning"));
            assertEquals(null, data.get("gbp"));
            assertEquals(false, s.rt.vxlanParams(vx.index()).orElseThrow().gbp());

            // GBP is a flag attribute: iproute2 shows "gbp": true, and the kernel reports it back
            s.rt.addLink(NewLink.vxlan("vx43", 43).vxlanLocal(IpAddr.parse("192.0.2.10")).vxlanDev(under).vxlanLearning(false).vxlanGbp(true));
            assertEquals(true, Json.asObject(info(ipLink(s, "vx43")).get("info_data")).get("gbp"));
            assertEquals(new VxlanParams(43, IpAddr.parse("192.0.2.10"), 8472, under, false, true),
                    s.rt.vxlanParams(s.rt.link("vx43").index()).orElseThrow());

            s.rt.addLink(NewLink.ifb("ifb0").up());
            assertEquals("ifb", s.rt.link("ifb0").kind());
            assertEquals("ifb", info(ipLink(s, "ifb0")).get("info_kind"));
        }
    }

    @Test
    void listAndDelete() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("d0", "d1"));
            s.rt.addLink(NewLink.bridge("dbr"));
            List<String> names = s.rt.links().stream().map(Link::name).sorted().toList();
            assertEquals(List.of("d0", "d1", "dbr", "lo"), names);
            Link lo = s.rt.link("lo");
            assertTrue(lo.loopback());
            assertNull(lo.kind());
            assertEquals(1, lo.index());

            s.rt.deleteLink("d0");
            assertTrue(s.rt.findLink("d0").isEmpty());
            assertTrue(s.rt.findLink("d1").isEmpty(), "deleting one veth end removes the pair");
            s.rt.deleteLink(s.rt.link("dbr").index());
            assertEquals(List.of("lo"), s.rt.links().stream().map(Link::name).toList());
            assertEquals(1, s.ipJson("link", "show").size());
        }
    }

    @Test
    void errorsCarryErrnoAndOperation() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("veth0", "veth0p"));
            ErrnoException exists = assertThrows(ErrnoException.class, () -> s.rt.addLink(NewLink.bridge("veth0")));
            assertEquals(Errno.EEXIST, exists.errno());
            assertTrue(exists.getMessage().startsWith("add link veth0: EEXIST (File exists)"), exists.getMessage());

            ErrnoException missing = assertThrows(ErrnoException.class, () -> s.rt.deleteLink("nosuch0"));
            assertEquals(Errno.ENODEV, missing.errno());
            assertTrue(missing.getMessage().startsWith("delete link nosuch0: ENODEV (No such device)"), missing.getMessage());

            ErrnoException get = assertThrows(ErrnoException.class, () -> s.rt.link("nosuch0"));
            assertEquals(Errno.ENODEV, get.errno());
            assertEquals(Errno.ENODEV, assertThrows(ErrnoException.class, () -> s.rt.link(9999)).errno());

            ErrnoException mtu = assertThrows(ErrnoException.class, () -> s.rt.setMtu(s.rt.link("veth0").index(), 10));
            assertEquals(Errno.EINVAL, mtu.errno());
            assertNotNull(mtu.detail(), "the kernel explains a bad MTU through extended ACK");

            // The socket stays usable after errors: sequence numbers keep matching.
            assertEquals("veth", s.rt.link("veth0").kind());
        }
    }

    @Test
    void bridgeVlans() {
        try (Scratch s = Scratch.create()) {
            try {
                s.rt.addLink(NewLink.bridge("vbr").vlanFiltering(true).up());
            } catch (ErrnoException e) {
                // Kernels built without CONFIG_BRIDGE_VLAN_FILTERING (this machine's) refuse it.
                Assumptions.assumeFalse(e.is(Errno.EOPNOTSUPP), "no bridge VLAN filtering in this kernel");
                throw e;
            }
            s.rt.addLink(NewLink.veth("vlp0", "vlp1"));
            int br = s.rt.link("vbr").index();
            int port = s.rt.link("vlp0").index();
            s.rt.setMaster(port, br);
            assertEquals(1L, Json.asObject(info(ipLink(s, "vbr")).get("info_data")).get("vlan_filtering"));

            s.rt.addBridgeVlan(port, 10, true, true, false);
            s.rt.addBridgeVlan(port, 20, false, false, false);
            s.rt.addBridgeVlan(br, 20, false, false, true);
            List<BridgeVlan> vlans = s.rt.bridgeVlans(port);
            assertTrue(vlans.contains(new BridgeVlan(10, true, true)), vlans.toString());
            assertTrue(vlans.contains(new BridgeVlan(20, false, false)), vlans.toString());
            assertTrue(s.rt.bridgeVlans(br).stream().anyMatch(v -> v.vid() == 20));
            String shown = Scratch.exec(List.of("bridge", "-n", s.name, "vlan", "show", "dev", "vlp0"));
            assertTrue(shown.contains("10 PVID Egress Untagged"), shown);
            assertTrue(shown.contains("20"), shown);

            s.rt.deleteBridgeVlan(port, 20, false);
            assertTrue(s.rt.bridgeVlans(port).stream().noneMatch(v -> v.vid() == 20));
            assertThrows(IllegalArgumentException.class, () -> s.rt.addBridgeVlan(port, 4095, false, false, false));
        }
    }
}
