package io.jcni.plugins.main.bridge;

import io.jcni.linux.MacAddress;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Names;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The bridge plugin's config, with the reference plugin's keys and defaults.
 *
 * @param flags the boolean keys that are true (after defaults; {@code isDefaultGateway} implies
 *     {@code isGateway}); read them through the named accessors below
 * @param vlans the trunk VLAN ids from {@code vlanTrunk}, sorted and deduplicated; empty if none
 * @param mac the container interface's MAC from CNI_ARGS MAC, args.cni.mac or runtimeConfig.mac
 *     (later ones win), or null
 * @param ipamType null for a layer-2-only network
 * @param dns the config's own dns, which replaces the IPAM's when set, or null
 */
record BridgeConf(String bridge, Set<Flag> flags, int mtu, int vlan, List<Integer> vlans, MacAddress mac, String ipamType,
                  Result.Dns dns) {

    static final String DEFAULT_BRIDGE = "cni0";

    /** The boolean keys: each with its config key and the reference plugin's default. */
    enum Flag {
        IS_GATEWAY("isGateway", false),
        IS_DEFAULT_GATEWAY("isDefaultGateway", false),
        FORCE_ADDRESS("forceAddress", false),
        IP_MASQ("ipMasq", false),
        HAIRPIN_MODE("hairpinMode", false),
        PROMISC_MODE("promiscMode", false),
        PRESERVE_DEFAULT_VLAN("preserveDefaultVlan", true),
        MAC_SPOOF_CHK("macspoofchk", false),
        ENABLE_DAD("enabledad", false),
        DISABLE_CONTAINER_INTERFACE("disableContainerInterface", false),
        PORT_ISOLATION("portIsolation", false);

        final String key;
        final boolean byDefault;

        Flag(String key, boolean byDefault) {
            this.key = key;
            this.byDefault = byDefault;
        }
    }

    BridgeConf {
        // Set.copyOf, not an EnumSet: EnumSet reads the enum's constants by reflection, which a
        // standalone call pays for (~1 ms) just to hold a few flags.
        flags = Set.copyOf(flags);
    }

    boolean isGateway() {
        return flags.contains(Flag.IS_GATEWAY);
    }

    boolean isDefaultGateway() {
        return flags.contains(Flag.IS_DEFAULT_GATEWAY);
    }

    boolean forceAddress() {
        return flags.contains(Flag.FORCE_ADDRESS);
    }

    boolean ipMasq() {
        return flags.contains(Flag.IP_MASQ);
    }

    boolean hairpinMode() {
        return flags.contains(Flag.HAIRPIN_MODE);
    }

    boolean promiscMode() {
        return flags.contains(Flag.PROMISC_MODE);
    }

    boolean preserveDefaultVlan() {
        return flags.contains(Flag.PRESERVE_DEFAULT_VLAN);
    }

    boolean macSpoofChk() {
        return flags.contains(Flag.MAC_SPOOF_CHK);
    }

    boolean enableDad() {
        return flags.contains(Flag.ENABLE_DAD);
    }

    boolean disableContainerInterface() {
        return flags.contains(Flag.DISABLE_CONTAINER_INTERFACE);
    }

    boolean portIsolation() {
        return flags.contains(Flag.PORT_ISOLATION);
    }

    static BridgeConf load(PluginRequest req) {
        return load(req.conf(), req.args());
    }

    static BridgeConf load(Map<String, Object> c, CniArgs args) {
        String bridge = Fields.string(c, "bridge", "");
        if (bridge == null) bridge = DEFAULT_BRIDGE;
        Names.checkConfigInterfaceName("'bridge'", bridge);
        Set<Flag> flags = new HashSet<>();
        for (Flag f : Flag.values()) if (Fields.bool(c, f.key, "", f.byDefault)) flags.add(f);
        // isDefaultGateway implies isGateway.
        if (flags.contains(Flag.IS_DEFAULT_GATEWAY)) flags.add(Flag.IS_GATEWAY);

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

        String ipamType = NetConfs.ipamType(c);
        if (flags.contains(Flag.DISABLE_CONTAINER_INTERFACE) && ipamType != null) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "cannot use IPAM when disableContainerInterface flag is set");
        }
        return new BridgeConf(bridge, flags, NetConfs.mtu(c), (int) vlan, vlans, mac, ipamType, NetConfs.dns(c));
    }

    /**
     * What this build cannot do yet, refused on ADD with an error naming the key. VLAN filtering
     * needs bridge VLAN netlink support (IFLA_BR_VLAN_FILTERING, RTM_SETLINK AF_BRIDGE
     * IFLA_AF_SPEC) that io.jcni.linux does not have.
     */
    void rejectUnsupported() {
        if (vlan != 0) throw unsupported("vlan", "'vlan' (VLAN filtering on the bridge) is not supported yet");
        if (!vlans.isEmpty()) throw unsupported("vlanTrunk", "'vlanTrunk' (VLAN filtering on the bridge) is not supported yet");
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
