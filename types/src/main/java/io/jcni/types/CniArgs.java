package io.jcni.types;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code CNI_ARGS} environment variable: {@code K=V;K2=V2}. A plugin rejects keys it does not
 * know unless {@code IgnoreUnknown} is 1 or true (the reference plugins' behaviour).
 */
public record CniArgs(Map<String, String> values) {

    public static final CniArgs EMPTY = new CniArgs(Map.of());

    public CniArgs {
        values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    public static CniArgs parse(String env) {
        Map<String, String> m = new LinkedHashMap<>();
        if (env == null || env.isEmpty()) return new CniArgs(m);
        for (String pair : env.split(";")) {
            if (pair.isEmpty()) continue;
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "ARGS: invalid pair \"" + pair + "\"", "expected KEY=VALUE");
            }
            m.put(pair.substring(0, eq), pair.substring(eq + 1));
        }
        return new CniArgs(m);
    }

    /** Builds CNI_ARGS from ordered pairs, as a runtime does. */
    public static String format(List<Map.Entry<String, String>> pairs) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, String> e : pairs) {
            if (!sb.isEmpty()) sb.append(';');
            sb.append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.toString();
    }

    public String get(String key) {
        return values.get(key);
    }

    public boolean ignoreUnknown() {
        String v = values.get("IgnoreUnknown");
        return v != null && (v.equals("1") || v.equalsIgnoreCase("true"));
    }

    /**
     * Fails on keys outside {@code known} unless IgnoreUnknown is set. The message lists every
     * unknown pair as the reference plugins' {@code types.LoadArgs} does:
     * {@code ARGS: unknown args ["K8S_POD_NAME=web" "FOO=bar"]}.
     */
    public void requireKnown(Set<String> known) {
        if (ignoreUnknown()) return;
        StringBuilder unknown = new StringBuilder();
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (e.getKey().equals("IgnoreUnknown") || known.contains(e.getKey())) continue;
            if (!unknown.isEmpty()) unknown.append(' ');
            unknown.append('"').append(e.getKey()).append('=').append(e.getValue()).append('"');
        }
        if (!unknown.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "ARGS: unknown args [" + unknown + "]",
                    "set IgnoreUnknown=1 in CNI_ARGS to ignore them");
        }
    }
}
