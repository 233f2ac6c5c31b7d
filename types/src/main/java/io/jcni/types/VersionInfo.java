package io.jcni.types;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The answer to VERSION: the versions a plugin supports. */
public record VersionInfo(String cniVersion, List<String> supportedVersions) implements Json.JsonWritable {

    public VersionInfo {
        supportedVersions = List.copyOf(supportedVersions);
    }

    /** What every jcni plugin answers. */
    public static VersionInfo ours() {
        return new VersionInfo(CniVersion.CURRENT.toString(), CniVersion.supportedStrings());
    }

    public boolean supports(String version) {
        return supportedVersions.contains(version);
    }

    @Override
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cniVersion", cniVersion);
        m.put("supportedVersions", new ArrayList<Object>(supportedVersions));
        return m;
    }

    /**
     * Reads a VERSION answer. Plugins from before 0.3.0 may answer nothing useful; libcni then
     * assumes 0.1.0 and 0.2.0, and so do we.
     */
    public static VersionInfo fromJson(Map<String, Object> m) {
        String v = Fields.string(m, "cniVersion", "version");
        List<String> s = Fields.stringList(m, "supportedVersions", "version");
        if (s == null || s.isEmpty()) s = List.of("0.1.0", "0.2.0");
        return new VersionInfo(v == null ? "0.1.0" : v, s);
    }
}
