package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.linux.VxlanParams;
import io.jcni.testfixtures.World;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class VtepReuseTest {
    static final IpAddr LOCAL = IpAddr.parse("192.168.77.2");

    @Test
    void theDeviceTheAgentMakesIsKept() {
        assertEquals(List.of(), VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 7, false), 1, LOCAL, 8472, 7));
    }

    @Test
    void everyParameterThatDiffersIsNamed() {
        IpAddr other = IpAddr.parse("192.168.77.9");
        assertEquals(List.of("VNI 2 (want 1)"), VtepReuse.differences(new VxlanParams(2, LOCAL, 8472, 7, false), 1, LOCAL, 8472, 7));
        assertEquals(List.of("port 4789 (want 8472)"), VtepReuse.differences(new VxlanParams(1, LOCAL, 4789, 7, false), 1, LOCAL, 8472, 7));
        assertEquals(List.of("local 192.168.77.9 (want 192.168.77.2)"), VtepReuse.differences(new VxlanParams(1, other, 8472, 7, false), 1, LOCAL, 8472, 7));
        assertEquals(List.of("local none (want 192.168.77.2)"), VtepReuse.differences(new VxlanParams(1, null, 8472, 7, false), 1, LOCAL, 8472, 7));
        assertEquals(List.of("underlay ifindex 3 (want 7)"), VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 3, false), 1, LOCAL, 8472, 7));
        assertEquals(List.of("learning on (want off)"), VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 7, true), 1, LOCAL, 8472, 7));
        assertEquals(5, VtepReuse.differences(new VxlanParams(9, other, 1, 3, true), 1, LOCAL, 8472, 7).size());
        // Backend.Learning and Backend.GBP as configured
        assertEquals(List.of(), VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 7, true, true), 1, LOCAL, 8472, 7, true, true));
        assertEquals(List.of("learning off (want on)", "gbp off (want on)"),
                VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 7, false, false), 1, LOCAL, 8472, 7, true, true));
        assertEquals(List.of("gbp on (want off)"), VtepReuse.differences(new VxlanParams(1, LOCAL, 8472, 7, false, true), 1, LOCAL, 8472, 7));
    }

    /** In a scratch namespace: a flannel.1 made with port 4789 and learning on is recreated as the agent's; the agent's own is kept (same MAC). */
    @Test
    @Tag("root")
    void anIncompatibleDeviceIsRecreatedAndACompatibleOneKept() throws IOException {
        try (World w = new World("jvtep"); Netns ns = Netns.open(World.path(w.host)); Rtnl rt = Rtnl.open(ns)) {
            rt.addLink(NewLink.bridge("under0")); // any device with an address will do (no dummy module here)
            Link under = rt.link("under0");
            rt.addAddress(under.index(), LOCAL, 24, false);
            rt.setUp(under.index());
            rt.addLink(NewLink.vxlan("flannel.1", 1).vxlanLocal(LOCAL).vxlanDev(under.index()).vxlanPort(4789).vxlanLearning(true));
            assertEquals(new VxlanParams(1, LOCAL, 4789, under.index(), true), rt.vxlanParams(rt.link("flannel.1").index()).orElseThrow());
            assertTrue(rt.vxlanParams(under.index()).isEmpty(), "not a vxlan device");

            List<String> notices = new ArrayList<>();
            Dataplane.Vxlan dp = new Dataplane.Vxlan(rt, new NetworkConfig.Vxlan(1, 8472), IpAddr.parse("192.168.77.2"), under, notices::add);
            Lease first = dp.local(Cidr.parse("10.5.1.0/24"));
            assertEquals(1, notices.size(), notices.toString());
            assertTrue(notices.getFirst().contains("port 4789 (want 8472), learning on (want off)"), notices.getFirst());
            assertEquals(new VxlanParams(1, LOCAL, 8472, under.index(), false), rt.vxlanParams(rt.link("flannel.1").index()).orElseThrow());

            Lease again = new Dataplane.Vxlan(rt, new NetworkConfig.Vxlan(1, 8472), IpAddr.parse("192.168.77.2"), under, notices::add)
                    .local(Cidr.parse("10.5.1.0/24"));
            assertEquals(1, notices.size(), "kept: " + notices);
            assertEquals(first.vtepMac(), again.vtepMac());
            assertFalse(first.vtepMac().isEmpty());
        }
    }
}
