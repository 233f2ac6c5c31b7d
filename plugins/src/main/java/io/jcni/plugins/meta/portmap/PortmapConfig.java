package io.jcni.plugins.meta.portmap;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The portmap config, with the reference plugin's keys and defaults.
 *
 * @param markMasqBit validated (0–31) as upstream; unused: jcni masquerades from conntrack state
 *                    and a set lookup, without a packet mark
 * @param externalSetMarkChain validated as upstream (not together with markMasqBit); an iptables
 *                    chain cannot be jumped to from nftables, so jcni masquerades itself instead
 * @param dataDir jcni extension: where element ownership is kept (default /var/lib/cni/jcni/nft)
 */
public record PortmapConfig(String network, boolean snat, boolean masqAll, int markMasqBit, String externalSetMarkChain,
                            List<PortMapping> mappings, Path dataDir) {

    public static final int DEFAULT_MARK_BIT = 13;

    /** One entry of runtimeConfig.portMappings; {@code hostIp} null when absent or unspecified (0.0.0.0, ::). */
    public record PortMapping(int hostPort, int containerPort, String protocol, IpAddr hostIp) {}

    public static PortmapConfig parse(Map<String, Object> conf) {
        String net = Fields.string(conf, "name", "");
        if (net == null) net = "";
        boolean snat = Fields.bool(conf, "snat", "", true);
        boolean masqAll = Fields.bool(conf, "masqAll", "", false);
        Long bit = Fields.integer(conf, "markMasqBit", "");
        String ext = Fields.string(conf, "externalSetMarkChain", "");
        if (bit != null && ext != null) {
            throw invalid("cannot specify externalSetMarkChain and markMasqBit", "markMasqBit: remove one of the two keys");
        }
        if (bit != null && (bit < 0 || bit > 31)) throw invalid("MasqMarkBit must be between 0 and 31", "markMasqBit: " + bit);
        for (String k : new String[] {"conditionsV4", "conditionsV6"}) {
            List<String> c = Fields.stringList(conf, k, "");
            if (c != null && !c.isEmpty()) {
                throw new CniException(ErrorCode.UNSUPPORTED_FIELD, "'" + k + "' is not supported",
                        k + ": jcni keeps all port mappings in shared nftables maps; per-network match conditions are not implemented");
            }
        }
        String backend = Fields.string(conf, "backend", "");
        if (backend != null && !backend.isEmpty() && !backend.equals("nftables")) {
            throw new CniException(ErrorCode.UNSUPPORTED_FIELD, "backend '" + backend + "' is not supported",
                    "backend: jcni's portmap implements only \"nftables\" (omit the key or set it to \"nftables\")");
        }
        Path dir = dataDir(conf);
        Map<String, Object> rc = Fields.object(conf, "runtimeConfig", "");
        List<PortMapping> maps = new ArrayList<>();
        List<Object> raw = rc == null ? null : Fields.list(rc, "portMappings", "runtimeConfig");
        if (raw != null) {
            Map<String, PortMapping> byKey = new LinkedHashMap<>();
            for (int i = 0; i < raw.size(); i++) {
                String where = "runtimeConfig.portMappings[" + i + "]";
                PortMapping m = mapping(Fields.element(raw.get(i), where), where);
                String key = (m.hostIp() == null ? "*" : m.hostIp().toString()) + "/" + m.protocol() + "/" + m.hostPort();
                PortMapping prev = byKey.putIfAbsent(key, m);
                if (prev != null && !prev.equals(m)) {
                    throw invalid("conflicting port mappings", where + ": host port " + m.hostPort() + "/" + m.protocol() + " is mapped twice");
                }
            }
            maps.addAll(byKey.values());
        }
        return new PortmapConfig(net, snat, masqAll, bit == null ? DEFAULT_MARK_BIT : bit.intValue(), ext, List.copyOf(maps), dir);
    }

    /** {@code dataDir}, or null for the default; all DEL reads. A value that is not a string counts as unset. */
    static Path dataDir(Map<String, Object> conf) {
        return Fields.value(conf, "dataDir") instanceof String s && !s.isEmpty() ? Path.of(s) : null;
    }

    private static PortMapping mapping(Map<String, Object> m, String where) {
        int hostPort = port(m, "hostPort", where);
        int containerPort = port(m, "containerPort", where);
        String proto = Fields.string(m, "protocol", where);
        proto = proto == null || proto.isEmpty() ? "tcp" : proto.toLowerCase(Locale.ROOT);
        if (!proto.equals("tcp") && !proto.equals("udp") && !proto.equals("sctp")) {
            throw invalid("invalid protocol '" + proto + "'", where + ".protocol: expected tcp, udp or sctp");
        }
        String hip = Fields.string(m, "hostIP", where);
        IpAddr host = null;
        if (hip != null && !hip.isEmpty()) {
            host = IpAddr.tryParse(hip);
            if (host == null) throw invalid("invalid hostIP '" + hip + "'", where + ".hostIP: not an IP address");
            if (isUnspecified(host)) host = null;
        }
        return new PortMapping(hostPort, containerPort, proto, host);
    }

    private static int port(Map<String, Object> m, String key, String where) {
        Long v = Fields.integer(m, key, where);
        if (v == null || v <= 0 || v > 65535) {
            String name = key.equals("hostPort") ? "host" : "container";
            throw invalid("Invalid " + name + " port number: " + v, Fields.path(where, key) + ": expected 1-65535");
        }
        return v.intValue();
    }

    static boolean isUnspecified(IpAddr a) {
        for (byte b : a.bytes()) if (b != 0) return false;
        return true;
    }

    private static CniException invalid(String msg, String details) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg, details);
    }

    /**
     * The container's addresses as the reference plugin picks them: the first IPv4 and the first
     * IPv6 of prevResult, skipping addresses of interfaces other than {@code ifname} in the sandbox.
     * Index 0: IPv4 or null; index 1: IPv6 or null.
     */
    public static Cidr[] containerIps(Result prev, String ifname) {
        Cidr[] out = new Cidr[2];
        if (prev == null) return out;
        for (Result.IpConfig ip : prev.ips()) {
            int fam = ip.isIpv6() ? 1 : 0;
            if (out[fam] != null) continue;
            Integer idx = ip.interfaceIndex();
            if (idx != null && idx >= 0 && idx < prev.interfaces().size()) {
                Result.Interface itf = prev.interfaces().get(idx);
                if (!ifname.equals(itf.name()) || itf.sandbox() == null || itf.sandbox().isEmpty()) continue;
            }
            out[fam] = ip.address();
        }
        return out;
    }
}
