package io.jcni.plugins.common;

import io.jcni.linux.Link;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.spec.Attachment;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Host-side links that jcni made for one attachment carry its name in their alias
 * ({@code jcni/<network>/<containerID>/<ifname>}, visible in {@code ip link}), so GC can find and
 * remove those whose attachment the runtime no longer knows, e.g. after a plugin was killed in the
 * middle of an ADD. None of the three parts can hold a '/', so the tag parses back unambiguously.
 */
public final class OwnedLinks {
    private static final String PREFIX = "jcni/";

    private OwnedLinks() {}

    public static String tag(PluginRequest req) {
        return tag(req.networkName(), req.containerId(), req.ifname());
    }

    public static String tag(String network, String containerId, String ifname) {
        return PREFIX + network + "/" + containerId + "/" + ifname;
    }

    /** The attachment a tag names, if it is a tag of this network. */
    static Attachment attachmentOf(String alias, String network) {
        if (alias == null || !alias.startsWith(PREFIX + network + "/")) return null;
        String[] rest = alias.substring(PREFIX.length() + network.length() + 1).split("/", -1);
        if (rest.length != 2 || rest[0].isEmpty() || rest[1].isEmpty()) return null;
        return new Attachment(rest[0], rest[1]);
    }

    /** Deletes this network's tagged links whose attachment is not in {@code valid}; returns their names. */
    public static List<String> collect(Rtnl host, String network, Collection<Attachment> valid) {
        Set<Attachment> keep = new HashSet<>(valid);
        List<String> removed = new ArrayList<>();
        for (Link l : host.links()) {
            Attachment a = attachmentOf(l.alias(), network);
            if (a == null || keep.contains(a)) continue;
            Links.deleteQuietly(host, l.name());
            removed.add(l.name());
        }
        return removed;
    }

    /**
     * GC for a plugin whose per-attachment state is tagged host links, masquerading and addresses
     * from IPAM (bridge, ptp): removes the links of attachments the runtime no longer lists (a killed ADD
     * leaves one behind while the sandbox lives on), then runs the IPAM plugin's GC with the same list.
     */
    public static void gcWithIpam(PluginRequest req) {
        try (Rtnl host = Rtnl.open()) {
            collect(host, req.networkName(), req.validAttachments());
        }
        IpMasq masq = IpMasq.of(req.conf());
        if (masq != null) masq.gc(req);
        Ipam ipam = Ipam.of(req);
        if (ipam != null) ipam.gc(req);
    }
}
