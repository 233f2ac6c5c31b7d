package io.jcni.types;

import java.util.LinkedHashMap;
import java.util.Map;

/** One container's attachment to a network, as GC's {@code cni.dev/valid-attachments} lists it. */
public record Attachment(String containerId, String ifname) implements Json.JsonWritable {

    /** The key GC puts into each plugin's config. */
    public static final String VALID_ATTACHMENTS_KEY = "cni.dev/valid-attachments";

    @Override
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("containerID", containerId);
        m.put("ifname", ifname);
        return m;
    }

    /** By hand, not the record's generated ones (CniVersion.equals says why). */
    @Override
    public boolean equals(Object o) {
        return o instanceof Attachment a && a.containerId.equals(containerId) && a.ifname.equals(ifname);
    }

    @Override
    public int hashCode() {
        return containerId.hashCode() * 31 + ifname.hashCode();
    }

    public static Attachment fromJson(Map<String, Object> m) {
        return new Attachment(Fields.requireString(m, "containerID", VALID_ATTACHMENTS_KEY),
                Fields.requireString(m, "ifname", VALID_ATTACHMENTS_KEY));
    }
}
