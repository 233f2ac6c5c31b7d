package io.jcni.overlay;

import io.jcni.linux.VxlanParams;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether an existing {@code flannel.<VNI>} device can be kept. Pure.
 *
 * <p>The agent keeps its VXLAN device across restarts, so that its MAC (the VtepMAC other hosts
 * know) and the pods' traffic are undisturbed. But a device of that name made with other
 * parameters (another VNI, UDP port, local address or underlay device, learning or GBP other than configured: a changed
 * network config or {@code --public-ip}, another tool, a flanneld of another setup) would
 * silently send to the wrong port or from the wrong address; it is recreated instead, as flanneld
 * does with an incompatible device, and the reason is logged.
 */
final class VtepReuse {
    private VtepReuse() {}

    /** What {@code have} differs in from a device with learning and GBP off; empty: keep the device. */
    static List<String> differences(VxlanParams have, int vni, IpAddr local, int port, int underlayIndex) {
        return differences(have, vni, local, port, underlayIndex, false, false);
    }

    /** What {@code have} differs in from what the agent wants ({@code Backend.Learning}, {@code Backend.GBP} too); empty: keep the device. */
    static List<String> differences(VxlanParams have, int vni, IpAddr local, int port, int underlayIndex, boolean learning, boolean gbp) {
        List<String> d = new ArrayList<>();
        if (have.vni() != vni) d.add("VNI " + have.vni() + " (want " + vni + ")");
        if (have.port() != port) d.add("port " + have.port() + " (want " + port + ")");
        if (have.local() == null || !have.local().equals(local)) {
            d.add("local " + (have.local() == null ? "none" : have.local()) + " (want " + local + ")");
        }
        if (have.underlayIndex() != underlayIndex) d.add("underlay ifindex " + have.underlayIndex() + " (want " + underlayIndex + ")");
        if (have.learning() != learning) d.add("learning " + onOff(have.learning()) + " (want " + onOff(learning) + ")");
        if (have.gbp() != gbp) d.add("gbp " + onOff(have.gbp()) + " (want " + onOff(gbp) + ")");
        return d;
    }

    private static String onOff(boolean b) {
        return b ? "on" : "off";
    }
}
