package io.jcni.linux;

/**
 * Bridge-port settings of an enslaved link (IFLA_PROTINFO / IFLA_BRPORT_*).
 *
 * @param state STP state (3 = forwarding)
 * @param hairpin whether frames may leave through the port they came in on (IFLA_BRPORT_MODE)
 */
public record BridgePort(int index, int masterIndex, int state, boolean hairpin, boolean isolated, boolean learning) {

    static BridgePort decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.IFINFOMSG_SIZE);
        NlAttrs p = a.nested(Rtm.IFLA_PROTINFO);
        return new BridgePort(m.i32(4), a.u32(Rtm.IFLA_MASTER, 0), p.u8(Rtm.IFLA_BRPORT_STATE, 0),
                p.u8(Rtm.IFLA_BRPORT_MODE, 0) != 0, p.u8(Rtm.IFLA_BRPORT_ISOLATED, 0) != 0,
                p.u8(Rtm.IFLA_BRPORT_LEARNING, 0) != 0);
    }
}
