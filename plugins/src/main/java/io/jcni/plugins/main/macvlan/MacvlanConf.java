package io.jcni.plugins.main.macvlan;

import io.jcni.linux.MacAddress;
import io.jcni.linux.MacvlanMode;
import io.jcni.plugins.common.NetConfs;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Result;
import java.util.Map;
import java.util.Set;

/**
 * The macvlan plugin's config, with the reference plugin's keys.
 *
 * @param master the parent link's name; empty for the interface of the default route
 * @param mode {@code mode}: bridge (the default), private, vepa or passthru
 * @param mtu 0 for the kernel's default (the master's MTU); checked against the master when it is known
 * @param mac the container interface's MAC: {@code mac}, then CNI_ARGS {@code MAC}, then
 *     {@code runtimeConfig.mac} (the {@code mac} capability), later ones winning; null for the kernel's
 * @param linkInContainer the master is inside the container's namespace
 * @param bcQueueLen {@code bcqueuelen}, the broadcast queue length; 0 for the kernel's
 * @param ipamType null for a layer-2-only interface
 * @param dns the config's own {@code dns}, which the result carries (the IPAM's is dropped, as upstream)
 */
record MacvlanConf(String master, MacvlanMode mode, long mtu, MacAddress mac, boolean linkInContainer, long bcQueueLen,
                   String ipamType, Result.Dns dns) {

    static MacvlanConf load(Map<String, Object> c, CniArgs args) {
        String master = Fields.string(c, "master", "");
        String modeText = Fields.string(c, "mode", "");
        MacvlanMode mode;
        try {
            mode = MacvlanMode.parse(modeText == null ? "" : modeText);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "unknown macvlan mode: \"" + modeText + "\"");
        }
        Long mtu = Fields.integer(c, "mtu", "");
        Long bc = Fields.integer(c, "bcqueuelen", "");
        if (bc != null && (bc < 0 || bc > 0xffffffffL)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid 'bcqueuelen'", "bcqueuelen " + bc + " is out of range");
        }

        String mac = Fields.string(c, "mac", "");
        if (!args.values().isEmpty()) {
            args.requireKnown(Set.of("MAC"));
            String envMac = args.get("MAC");
            if (envMac != null && !envMac.isEmpty()) mac = envMac;
        }
        Map<String, Object> rc = Fields.object(c, "runtimeConfig", "");
        String rcMac = rc == null ? null : Fields.string(rc, "mac", "runtimeConfig");
        if (rcMac != null && !rcMac.isEmpty()) mac = rcMac;

        Result.Dns dns = NetConfs.dns(c);
        return new MacvlanConf(master == null ? "" : master, mode, mtu == null ? 0 : mtu, parseMac(mac),
                Fields.bool(c, "linkInContainer", "", false), bc == null ? 0 : bc, NetConfs.ipamType(c),
                dns == null ? Result.Dns.EMPTY : dns);
    }

    static MacAddress parseMac(String s) {
        if (s == null || s.isEmpty()) return null;
        MacAddress m;
        try {
            m = MacAddress.parse(s);
        } catch (IllegalArgumentException e) {
            m = null;
        }
        if (m == null || m.bytes().length != 6) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid args " + s + " for MAC addr", "\"" + s + "\" is not a 6-byte MAC address");
        }
        return m;
    }
}
