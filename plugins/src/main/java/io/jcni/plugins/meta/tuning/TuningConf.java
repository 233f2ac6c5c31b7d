package io.jcni.plugins.meta.tuning;

import io.jcni.linux.MacAddress;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The tuning plugin's settings after every source is applied, in upstream's order of precedence:
 * the config's own keys, then CNI_ARGS {@code MAC}, then the {@code mac} capability
 * ({@code runtimeConfig.mac}), then {@code args.cni} (mac, mtu, promisc, allmulti, txQLen, and
 * sysctl entries merged over the config's).
 *
 * @param sysctl keys as written, in config order, with their values
 * @param mac null when the MAC is left alone
 * @param mtu 0 when the MTU is left alone
 * @param promisc only {@code true} does anything (upstream never turns promiscuous mode off)
 * @param allmulti null when left alone
 * @param txQLen null when left alone
 */
record TuningConf(String dataDir, Map<String, String> sysctl, MacAddress mac, boolean promisc, int mtu, Boolean allmulti,
                  Integer txQLen) {

    static final String DEFAULT_DATA_DIR = "/run/cni/tuning";

    /** Whether an interface attribute changes, so the originals must be saved for DEL. */
    boolean changesLink() {
        return mac != null || mtu != 0 || promisc || allmulti != null || txQLen != null;
    }

    static TuningConf parse(PluginRequest req) {
        Map<String, Object> conf = req.conf();
        Fields.string(conf, "dataDir", "");
        String dataDir = dataDir(conf);

        Map<String, String> sysctl = new LinkedHashMap<>();
        putSysctls(sysctl, Fields.object(conf, "sysctl", ""), "sysctl");
        String mac = Fields.string(conf, "mac", "");
        boolean promisc = Fields.bool(conf, "promisc", "", false);
        int mtu = nonNegative(conf, "mtu", "");
        Boolean allmulti = Fields.bool(conf, "allmulti", "");
        Integer txQLen = Fields.integer(conf, "txQLen", "") == null ? null : nonNegative(conf, "txQLen", "");

        req.args().requireKnown(Set.of("MAC"));
        String envMac = req.args().get("MAC");
        if (envMac != null && !envMac.isEmpty()) mac = envMac;

        String rcMac = Fields.string(req.runtimeConfig(), "mac", "runtimeConfig");
        if (rcMac != null && !rcMac.isEmpty()) mac = rcMac;

        Map<String, Object> args = Fields.object(conf, "args", "");
        Map<String, Object> cni = args == null ? null : Fields.object(args, "cni", "args");
        if (cni != null) {
            putSysctls(sysctl, Fields.object(cni, "sysctl", "args.cni"), "args.cni.sysctl");
            String argMac = Fields.string(cni, "mac", "args.cni");
            if (argMac != null) mac = argMac;
            Boolean argPromisc = Fields.bool(cni, "promisc", "args.cni");
            if (argPromisc != null) promisc = argPromisc;
            if (Fields.integer(cni, "mtu", "args.cni") != null) mtu = nonNegative(cni, "mtu", "args.cni");
            Boolean argAllmulti = Fields.bool(cni, "allmulti", "args.cni");
            if (argAllmulti != null) allmulti = argAllmulti;
            if (Fields.integer(cni, "txQLen", "args.cni") != null) txQLen = nonNegative(cni, "txQLen", "args.cni");
        }

        MacAddress parsedMac = mac == null || mac.isEmpty() ? null : parseMac(mac);
        return new TuningConf(dataDir, Collections.unmodifiableMap(sysctl), parsedMac, promisc, mtu, allmulti, txQLen);
    }

    /** A Go {@code map[string]string}: keys are exact, not folded. */
    /** {@code dataDir} or its default; all DEL reads, so that no other value can stop a DEL. */
    static String dataDir(Map<String, Object> conf) {
        return Fields.value(conf, "dataDir") instanceof String s && !s.isEmpty() ? s : DEFAULT_DATA_DIR;
    }

    private static void putSysctls(Map<String, String> into, Map<String, Object> from, String where) {
        if (from == null) return;
        for (String key : from.keySet()) {
            String value = Fields.Exact.string(from, key, where);
            if (value == null) {
                throw new CniException(ErrorCode.DECODING_FAILURE, "invalid type for '" + where + "." + key + "'",
                        "expected a string, got null");
            }
            into.put(key, value);
        }
    }

    private static int nonNegative(Map<String, Object> m, String key, String where) {
        Long v = Fields.integer(m, key, where);
        if (v == null) return 0;
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid " + Fields.path(where, key) + " " + v,
                    "must be between 0 and " + Integer.MAX_VALUE);
        }
        return (int) (long) v;
    }

    /**
     * Parses a hardware address as Go's net.ParseMAC does: 6, 8 or 20 bytes written as
     * {@code aa:bb:..}, {@code aa-bb-..} or {@code aabb.ccdd.eeff}.
     */
    static MacAddress parseMac(String s) {
        byte[] bytes = null;
        try {
            if (s.indexOf('.') >= 0) {
                String[] groups = s.split("\\.", -1);
                StringBuilder hex = new StringBuilder();
                for (String g : groups) {
                    if (g.length() != 4) throw new IllegalArgumentException();
                    hex.append(g);
                }
                bytes = HexFormat.of().parseHex(hex);
            } else if (s.length() > 2 && (s.charAt(2) == ':' || s.charAt(2) == '-')) {
                char sep = s.charAt(2);
                bytes = HexFormat.ofDelimiter(String.valueOf(sep)).parseHex(s);
            }
        } catch (IllegalArgumentException e) {
            bytes = null;
        }
        if (bytes == null || (bytes.length != 6 && bytes.length != 8 && bytes.length != 20)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid args " + s + " for MAC addr",
                    "address " + s + ": invalid MAC address");
        }
        return MacAddress.of(bytes);
    }
}
