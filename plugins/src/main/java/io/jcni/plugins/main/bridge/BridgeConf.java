package io.jcni.plugins.main.bridge;

import io.jcni.linux.MacAddress;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.spec.CniArgs;
import io.jcni.spec.CniException;
import io.jcni.spec.ErrorCode;
import io.jcni.spec.Fields;
import io.jcni.spec.Names;
import io.jcni.spec.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The bridge plugin's config, with the reference plugin's keys and defaults.
 *
 * @param vlans the trunk VLAN ids from {@code vlanTrunk}, sorted and deduplicated; empty if none
 * @param mac the container interface's MAC from CNI_ARGS MAC, args.cni.mac or runtimeConfig.mac
 *     (later ones win), or null
 * @param ipamType null for a layer-2-only network
 * @param dns the config's own dns, which replaces the IPAM's when set, or null
 */
record BridgeConf(String bridge, boolean isGateway, boolean isDefaultGateway, boolean forceAddress, boolean ipMasq,
                  int mtu, boolean hairpinMode, boolean promiscMode, int vlan, List<Integer> vlans,
                  boolean preserveDefaultVlan, boolean macSpoofChk, boolean enableDad, boolean disableContainerInterface,
                  boolean portIsolation, MacAddress mac, String ipamType, Result.Dns dns) {

    static final String DEFAULT_BRIDGE = "cni0";

    static BridgeConf load(PluginRequest req) {
        return load(req.conf(), req.args());
    }

    static BridgeConf load(Map<String, Object> c, CniArgs args) {
        String bridge = Fields.string(c, "bridge", "");
        if (bridge == null) bridge = DEFAULT_BRIDGE;
        Names.checkConfigInterfaceName("'bridge'", bridge);
        boolean isDefaultGateway = Fields.bool(c, "isDefaultGateway", "", false);
        // isDefaultGateway implies isGateway.
        boolean isGateway = Fields.bool(c, "isGateway", "", false) || isDefaultGateway;

        Long vlanL = Fields.integer(c, "vlan", "");
        long vlan = vlanL == null ? 0 : vlanL;
        if (vlan < 0 || vlan > 4094) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid VLAN ID " + vlan + " (must be between 0 and 4094)",
                    "'vlan' must be between 0 and 4094");
        }
        List<Integer> vlans = vlanTrunk(c);
        if (vlan > 0 && !vlans.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cannot set vlan and vlanTrunk at the same time");
        }

        MacAddress mac = null;
        String macText = null;
        if (!args.values().isEmpty()) {
            args.requireKnown(Set.of("MAC"));
            String m = args.get("MAC");
            if (m != null && !m.isEmpty()) macText = m;
        }
        Map<String, Object> a = Fields.object(c, "args", "");
        Map<String, Object> cniArgs = a == null ? null : Fields.object(a, "cni", "args");
        String argMac = cniArgs == null ? null : Fields.string(cniArgs, "mac", "args.cni");
        if (argMac != null && !argMac.isEmpty()) macText = argMac;
        Map<String, Object> rc = Fields.object(c, "runtimeConfig", "");
        String rcMac = rc == null ? null : Fields.string(rc, "mac", "runtimeConfig");
        if (rcMac != null && !rcMac.isEmpty()) macText = rcMac;
        if (macText != null) mac = parseMac(macText);

        boolean disableContainerInterface = Fields.bool(c, "disableContainerInterface", "", false);
        String ipamType = NetConfs.ipamType(c);
        if (disableContainerInterface && ipamType != null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cannot use IPAM when disableContainerInterface flag is set");
        }

        return new BridgeConf(bridge, isGateway, isDefaultGateway, Fields.bool(c, "forceAddress", "", false),
                Fields.bool(c, "ipMasq", "", false), NetConfs.mtu(c), Fields.bool(c, "hairpinMode", "", false),
                Fields.bool(c, "promiscMode", "", false), (int) vlan, vlans,
                Fields.bool(c, "preserveDefaultVlan", "", true), Fields.bool(c, "macspoofchk", "", false),
                Fields.bool(c, "enabledad", "", false), disableContainerInterface,
                Fields.bool(c, "portIsolation", "", false), mac, ipamType, NetConfs.dns(c));
    }

    /**
     * What this build cannot do yet, refused on ADD with an error naming the key. VLAN filtering
     * needs bridge VLAN netlink support (IFLA_BR_VLAN_FILTERING, RTM_SETLINK AF_BRIDGE
     * IFLA_AF_SPEC) that io.jcni.linux does not have; macspoofchk needs nftables rules not written yet.
     */
    void rejectUnsupported() {
        if (vlan != 0) throw unsupported("vlan", "'vlan' (VLAN filtering on the bridge) is not supported yet");
        if (!vlans.isEmpty()) throw unsupported("vlanTrunk", "'vlanTrunk' (VLAN filtering on the bridge) is not supported yet");
        if (macSpoofChk) throw unsupported("macspoofchk", "'macspoofchk' (MAC spoof filtering) is not supported yet");
    }

    private static CniException unsupported(String key, String details) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, key + " is not supported yet", details);
    }

    static MacAddress parseMac(String s) {
        MacAddress m;
        try {
            m = MacAddress.parse(s);
        } catch (IllegalArgumentException e) {
            m = null;
        }
        if (m == null || m.bytes().length != 6) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid MAC address", "\"" + s + "\"");
        }
        return m;
    }

    /** collectVlanTrunk: {"id": n} and {"minID": a, "maxID": b} items, each id in 1..4094. */
    static List<Integer> vlanTrunk(Map<String, Object> c) {
        List<Object> raw = Fields.list(c, "vlanTrunk", "");
        if (raw == null) return List.of();
        TreeSet<Integer> ids = new TreeSet<>();
        for (int i = 0; i < raw.size(); i++) {
            String where = "vlanTrunk[" + i + "]";
            Map<String, Object> m = Fields.element(raw.get(i), where);
            Long min = Fields.integer(m, "minID", where);
            Long max = Fields.integer(m, "maxID", where);
            Long id = Fields.integer(m, "id", where);
            if (min != null && max != null) {
                if (min <= 0 || min > 4094) throw trunk("incorrect trunk minID parameter");
                if (max <= 0 || max > 4094) throw trunk("incorrect trunk maxID parameter");
                if (max < min) throw trunk("minID is greater than maxID in trunk parameter");
                for (long v = min; v <= max; v++) ids.add((int) v);
            } else if (max != null) {
                throw trunk("minID and maxID should be configured simultaneously, minID is missing");
            } else if (min != null) {
                throw trunk("minID and maxID should be configured simultaneously, maxID is missing");
            }
            if (id != null) {
                if (id <= 0 || id > 4094) throw trunk("incorrect trunk id parameter");
                ids.add(id.intValue());
            }
        }
        return new ArrayList<>(ids);
    }

    private static CniException trunk(String msg) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg, "in 'vlanTrunk'");
    }
}
