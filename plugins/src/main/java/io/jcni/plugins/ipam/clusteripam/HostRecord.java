package io.jcni.plugins.ipam.clusteripam;

import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the host that made an allocation records about it, for its own periodic reconcile: the
 * address, the container's network namespace (the path the runtime gave and the namespace's
 * inode, 0 when it could not be read) and when the allocation was made (this host's clock, in ms).
 * Stored as JSON at {@link Allocations#hostKey}.
 */
public record HostRecord(IpAddr ip, String netns, long netnsInode, long createdMillis) {

    public String encode() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ip", ip.toString());
        m.put("netns", netns);
        m.put("netnsInode", netnsInode);
        m.put("created", createdMillis);
        return Json.write(m);
    }

    /** The record in {@code json}, or null when it is not one (then the index entry is only dropped). */
    public static HostRecord decode(String json) {
        try {
            Map<String, Object> m = Json.parseObject(json);
            IpAddr ip = m.get("ip") instanceof String s ? IpAddr.tryParse(s) : null;
            if (ip == null || !(m.get("netns") instanceof String netns)) return null;
            if (!(m.get("netnsInode") instanceof Number inode) || !(m.get("created") instanceof Number created)) return null;
            return new HostRecord(ip, netns, inode.longValue(), created.longValue());
        } catch (RuntimeException e) {
            return null;
        }
    }
}
