package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One cached attachment in libcni's {@code cniCacheV1} format, so that jcni, podman, containerd and
 * cnitool read each other's cache files.
 *
 * @param config the network configuration bytes the attachment was made with (base64 on disk)
 * @param netns may be empty (older libcni versions do not record it)
 * @param result the final ADD result as JSON, in its own version; null when absent
 */
public record CacheEntry(String containerId, byte[] config, String ifName, String networkName, String netns,
                         List<Map.Entry<String, String>> cniArgs, Map<String, Object> capabilityArgs,
                         Map<String, Object> result) implements Json.JsonWritable {

    public static final String KIND = "cniCacheV1";

    public CacheEntry {
        containerId = containerId == null ? "" : containerId;
        config = config == null ? new byte[0] : config.clone();
        ifName = ifName == null ? "" : ifName;
        networkName = networkName == null ? "" : networkName;
        netns = netns == null ? "" : netns;
        cniArgs = cniArgs == null ? List.of() : List.copyOf(cniArgs);
        capabilityArgs = capabilityArgs == null ? Map.of() : capabilityArgs;
    }

    @Override
    public byte[] config() {
        return config.clone();
    }

    /** The runtime conf the attachment was made with. */
    public RuntimeConf runtimeConf() {
        return new RuntimeConf(containerId, netns, ifName, cniArgs, capabilityArgs);
    }

    /** The cached result decoded, or null. */
    public Result decodedResult() {
        return result == null ? null : Result.fromJson(result);
    }

    /** The on-disk JSON: field names and omissions as libcni's cachedInfo. */
    @Override
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", KIND);
        m.put("containerId", containerId);
        m.put("config", Base64.getEncoder().encodeToString(config));
        m.put("ifName", ifName);
        m.put("networkName", networkName);
        if (!netns.isEmpty()) m.put("netns", netns);
        if (!cniArgs.isEmpty()) {
            List<Object> l = new ArrayList<>();
            for (Map.Entry<String, String> e : cniArgs) l.add(new ArrayList<Object>(List.of(e.getKey(), e.getValue())));
            m.put("cniArgs", l);
        }
        if (!capabilityArgs.isEmpty()) m.put("capabilityArgs", capabilityArgs);
        if (result != null && !result.isEmpty()) m.put("result", result);
        return m;
    }

    /**
     * Reads a cache file's JSON. A file without {@code kind} is the pre-cniCacheV1 format, which holds
     * just the result; it comes back with only {@link #result()} set.
     */
    public static CacheEntry fromJson(Map<String, Object> m, String where) {
        Object kind = m.get("kind");
        if (kind == null) {
            return new CacheEntry("", null, "", "", "", null, null, m);
        }
        if (!KIND.equals(kind)) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "cached network config has wrong kind",
                    where + ": kind is " + Json.write(kind) + ", expected \"" + KIND + "\"");
        }
        String cfg = Fields.string(m, "config", where);
        byte[] config;
        try {
            config = cfg == null ? new byte[0] : Base64.getDecoder().decode(cfg);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.DECODING_FAILURE, "invalid cache file", where + ": config is not base64: " + e.getMessage(), e);
        }
        List<Map.Entry<String, String>> args = new ArrayList<>();
        List<Object> rawArgs = Fields.list(m, "cniArgs", where);
        if (rawArgs != null) {
            for (int i = 0; i < rawArgs.size(); i++) {
                if (!(rawArgs.get(i) instanceof List<?> pair) || pair.size() != 2
                        || !(pair.get(0) instanceof String k) || !(pair.get(1) instanceof String v)) {
                    throw new CniException(ErrorCode.DECODING_FAILURE, "invalid cache file", where + ": cniArgs[" + i + "] is not a [key, value] pair");
                }
                args.add(Map.entry(k, v));
            }
        }
        return new CacheEntry(Fields.string(m, "containerId", where), config, Fields.string(m, "ifName", where),
                Fields.string(m, "networkName", where), Fields.string(m, "netns", where), args,
                Fields.object(m, "capabilityArgs", where), Fields.object(m, "result", where));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CacheEntry c && containerId.equals(c.containerId) && Arrays.equals(config, c.config)
                && ifName.equals(c.ifName) && networkName.equals(c.networkName) && netns.equals(c.netns)
                && cniArgs.equals(c.cniArgs) && capabilityArgs.equals(c.capabilityArgs) && Objects.equals(result, c.result);
    }

    @Override
    public int hashCode() {
        return Objects.hash(containerId, Arrays.hashCode(config), ifName, networkName, netns, cniArgs, capabilityArgs, result);
    }

    @Override
    public String toString() {
        return "CacheEntry[" + networkName + "/" + containerId + "/" + ifName + "]";
    }
}
