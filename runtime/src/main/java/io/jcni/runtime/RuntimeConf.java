package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Names;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-attachment arguments of one invocation (libcni's RuntimeConf): everything but the network
 * configuration itself.
 *
 * @param containerId the container ID (CNI_CONTAINERID)
 * @param netns the network namespace path (CNI_NETNS); may be empty on DEL
 * @param ifName the interface name inside the container (CNI_IFNAME)
 * @param args the CNI_ARGS pairs, in order
 * @param capabilityArgs capability data; each plugin gets, in {@code runtimeConfig}, only the keys it
 *     declares in its {@code capabilities}
 */
public record RuntimeConf(String containerId, String netns, String ifName, List<Map.Entry<String, String>> args,
                          Map<String, Object> capabilityArgs) {

    public RuntimeConf {
        containerId = containerId == null ? "" : containerId;
        netns = netns == null ? "" : netns;
        ifName = ifName == null ? "" : ifName;
        args = args == null ? List.of() : List.copyOf(args);
        capabilityArgs = capabilityArgs == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(capabilityArgs));
    }

    public RuntimeConf(String containerId, String netns, String ifName) {
        this(containerId, netns, ifName, List.of(), Map.of());
    }

    /** CNI_ARGS as the plugin sees it: {@code K=V;K2=V2}. */
    public String argsString() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : args) {
            if (!sb.isEmpty()) sb.append(';');
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.toString();
    }

    /** Parses CNI_ARGS ({@code K=V;K2=V2}); empty pairs are skipped, a pair without a key is an error. */
    public static List<Map.Entry<String, String>> parseArgs(String s) {
        List<Map.Entry<String, String>> out = new ArrayList<>();
        if (s == null || s.isEmpty()) return out;
        for (String pair : s.split(";")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "invalid CNI_ARGS pair \"" + pair + "\"", "expected KEY=VALUE");
            }
            out.add(Map.entry(pair.substring(0, eq), pair.substring(eq + 1)));
        }
        return out;
    }

    /** Checks the container ID and interface name as libcni does before ADD and CHECK. */
    public void validate() {
        Names.checkContainerId(containerId);
        Names.checkInterfaceName(ifName);
    }
}
