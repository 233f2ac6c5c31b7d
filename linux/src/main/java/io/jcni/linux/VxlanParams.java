package io.jcni.linux;

import io.jcni.types.IpAddr;

/**
 * What a VXLAN device was created with, as the kernel reports it (IFLA_INFO_DATA), for deciding
 * whether an existing device can be reused.
 *
 * @param vni IFLA_VXLAN_ID
 * @param local IFLA_VXLAN_LOCAL(6), or null when none was set
 * @param port the UDP destination port (IFLA_VXLAN_PORT, network order on the wire)
 * @param underlayIndex IFLA_VXLAN_LINK: the device its packets leave by, 0 if none
 * @param learning IFLA_VXLAN_LEARNING
 * @param gbp IFLA_VXLAN_GBP (a flag attribute) present
 */
public record VxlanParams(int vni, IpAddr local, int port, int underlayIndex, boolean learning, boolean gbp) {

    public VxlanParams(int vni, IpAddr local, int port, int underlayIndex, boolean learning) {
        this(vni, local, port, underlayIndex, learning, false);
    }

    /** The parameters in an RTM_NEWLINK of a vxlan link, or null when it is not one. */
    static VxlanParams decode(NlMsg m) {
        NlAttrs info = m.attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_LINKINFO);
        if (!"vxlan".equals(info.string(Rtm.IFLA_INFO_KIND))) return null;
        NlAttrs d = info.nested(Rtm.IFLA_INFO_DATA);
        IpAddr local = d.address(Rtm.IFLA_VXLAN_LOCAL);
        if (local == null) local = d.address(Rtm.IFLA_VXLAN_LOCAL6);
        return new VxlanParams(d.u32(Rtm.IFLA_VXLAN_ID, 0), local, d.be16(Rtm.IFLA_VXLAN_PORT, 0),
                d.u32(Rtm.IFLA_VXLAN_LINK, 0), d.u8(Rtm.IFLA_VXLAN_LEARNING, 1) != 0, d.has(Rtm.IFLA_VXLAN_GBP));
    }
}
