package io.jcni.plugins.meta.flannel;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The flannel plugin's config, keys as the reference plugin's ({@code subnetFile}, {@code dataDir},
 * {@code delegate}, {@code ipam}, {@code runtimeConfig}) plus jcni's {@code subnetFileWait}: how many
 * seconds ADD waits for a missing subnet file (the overlay agent may not have leased a subnet yet
 * when the node's first pods start) before failing with "try again later". 0 fails at once, as the reference.
 */
public record FlannelConf(String name, String cniVersion, Path subnetFile, Path dataDir, Map<String, Object> delegate,
        Map<String, Object> ipam, Map<String, Object> runtimeConfig, Duration subnetFileWait) {

    public static final Path DEFAULT_SUBNET_FILE = Path.of("/run/flannel/subnet.env");
    public static final Path DEFAULT_DATA_DIR = Path.of("/var/lib/cni/flannel");
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

    public static FlannelConf parse(Map<String, Object> conf) {
        String sf = Fields.string(conf, "subnetFile", "");
        String dd = Fields.string(conf, "dataDir", "");
        Long wait = Fields.integer(conf, "subnetFileWait", "");
        if (wait != null && (wait < 0 || wait > 3600)) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid subnetFileWait", "seconds in [0, 3600], got " + wait);
        }
        Map<String, Object> delegate = copy(Fields.object(conf, "delegate", ""));
        return new FlannelConf(Fields.string(conf, "name", ""), Fields.string(conf, "cniVersion", ""),
                sf == null || sf.isEmpty() ? DEFAULT_SUBNET_FILE : Path.of(sf), dd == null || dd.isEmpty() ? DEFAULT_DATA_DIR : Path.of(dd),
                delegate, copy(Fields.object(conf, "ipam", "")), Fields.object(conf, "runtimeConfig", ""),
                wait == null ? DEFAULT_WAIT : Duration.ofSeconds(wait));
    }

    private static Map<String, Object> copy(Map<String, Object> m) {
        return m == null ? null : Json.asObject(Json.deepCopy(m));
    }

    /**
     * The delegate's config, as the reference builds it: the delegate section (rejected if it has
     * {@code name} or {@code ipam}, or a non-string {@code type}) plus name; type bridge; ipMasq the
     * inverse of FLANNEL_IPMASQ, mtu FLANNEL_MTU and (bridge) isGateway true unless given;
     * cniVersion; runtimeConfig; and an ipam section from the top-level {@code ipam} (type
     * host-local unless given) with {@code ranges} [[{subnet: FLANNEL_SUBNET}], [{subnet: FLANNEL_IPV6_SUBNET}]]
     * (each when present: dual-stack, IPv4-only or IPv6-only) and its routes plus one to each network
     * of FLANNEL_NETWORK and FLANNEL_IPV6_NETWORK. Pure.
     */
    public Map<String, Object> delegateConfig(SubnetFile env) {
        Map<String, Object> d = delegate == null ? new LinkedHashMap<>() : new LinkedHashMap<>(delegate);
        if (d.containsKey("type") && !(d.get("type") instanceof String)) {
            throw invalid("'delegate' dictionary, if present, must have (string) 'type' field");
        }
        if (d.containsKey("name")) throw invalid("'delegate' dictionary must not have 'name' field, it'll be set by flannel");
        if (d.containsKey("ipam")) throw invalid("'delegate' dictionary must not have 'ipam' field, it'll be set by flannel");
        if (runtimeConfig != null) d.put("runtimeConfig", runtimeConfig);
        d.put("name", name);
        d.putIfAbsent("type", "bridge");
        d.putIfAbsent("ipMasq", !env.ipMasq());
        d.putIfAbsent("mtu", (long) env.mtu());
        if ("bridge".equals(d.get("type"))) d.putIfAbsent("isGateway", true);
        if (cniVersion != null && !cniVersion.isEmpty()) d.put("cniVersion", cniVersion);
        Map<String, Object> i = ipam == null ? new LinkedHashMap<>() : new LinkedHashMap<>(ipam);
        i.putIfAbsent("type", "host-local");
        // One range set per family present, IPv4 first, as the reference (flannel-io/cni-plugin getDelegateIPAM).
        List<Object> ranges = new ArrayList<>();
        for (io.jcni.types.Cidr sn : new io.jcni.types.Cidr[] {env.subnet(), env.ipv6Subnet()}) {
            if (sn == null) continue;
            Map<String, Object> range = new LinkedHashMap<>();
            range.put("subnet", sn.masked().toString());
            ranges.add(List.of(range));
        }
        i.put("ranges", ranges);
        List<Object> routes = new ArrayList<>();
        if (i.get("routes") instanceof List<?> given) routes.addAll(given);
        else if (i.get("routes") != null) throw invalid("failed to read IPAM routes: 'ipam.routes' must be a list");
        List<io.jcni.types.Cidr> networks = new ArrayList<>(env.networks());
        networks.addAll(env.ipv6Networks());
        for (io.jcni.types.Cidr nw : networks) {
            Map<String, Object> toNetwork = new LinkedHashMap<>();
            toNetwork.put("dst", nw.masked().toString());
            routes.add(toNetwork);
        }
        i.put("routes", routes);
        d.put("ipam", i);
        return d;
    }

    private static CniException invalid(String msg) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg);
    }
}
