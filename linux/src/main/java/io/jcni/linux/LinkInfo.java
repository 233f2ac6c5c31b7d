package io.jcni.linux;

/**
 * A link with the kind-specific settings of its IFLA_INFO_DATA that CHECK verifies: what
 * {@link Rtnl#linkInfo} answers.
 *
 * @param macvlanMode for a macvlan, its mode; otherwise null
 * @param ipvlanMode for an ipvlan, its mode; otherwise null
 * @param vlanId for a vlan, its 802.1Q id; otherwise -1
 */
public record LinkInfo(Link link, MacvlanMode macvlanMode, IpvlanMode ipvlanMode, int vlanId) {

    static LinkInfo decode(NlMsg m) {
        Link link = Link.decode(m);
        NlAttrs data = m.attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_LINKINFO).nested(Rtm.IFLA_INFO_DATA);
        MacvlanMode macvlan = null;
        IpvlanMode ipvlan = null;
        int vlanId = -1;
        switch (link.kind() == null ? "" : link.kind()) {
            case "macvlan" -> macvlan = MacvlanMode.of(data.u32(Rtm.IFLA_MACVLAN_MODE, 0));
            case "ipvlan" -> ipvlan = IpvlanMode.of(data.u16(Rtm.IFLA_IPVLAN_MODE, -1));
            case "vlan" -> vlanId = data.u16(Rtm.IFLA_VLAN_ID, -1);
            default -> { }
        }
        return new LinkInfo(link, macvlan, ipvlan, vlanId);
    }
}
