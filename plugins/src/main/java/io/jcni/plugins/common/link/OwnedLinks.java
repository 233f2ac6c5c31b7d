package io.jcni.plugins.common.link;

import io.jcni.linux.Link;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ipam.Ipam;
import io.jcni.plugins.common.nft.IpMasq;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.Names;
import java.nio.charset.StandardCharsets;
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
 *
 * <p>An alias holds at most {@value #MAX_ALIAS} bytes, and the reference accepts longer container
 * IDs and network names: such a tag becomes {@code jcni#<h(network)>/<h(tag)>} (SHA-256, hex), which
 * GC still tells apart by network and matches against the tags of the valid attachments. Other
 * kinds of tag (bandwidth's ifbs) follow the same scheme with their own kind.
 */
public final class OwnedLinks {
    /** The kind of tag bridge and ptp put on their host veths. */
    public static final String VETH = "jcni";
    /** IFALIASZ is 256 bytes including the terminating NUL. */
    static final int MAX_ALIAS = 255;

    private OwnedLinks() {}

    public static String tag(PluginRequest req) {
        return tag(req.networkName(), req.containerId(), req.ifname());
    }

    public static String tag(String network, String containerId, String ifname) {
        return tag(VETH, network, containerId, ifname);
    }

    /** {@code <kind>/<network>/<containerID>/<ifname>}, or {@code <kind>#<h(network)>/<h(that)>} when longer than an alias holds. */
    public static String tag(String kind, String network, String containerId, String ifname) {
        String plain = kind + "/" + network + "/" + containerId + "/" + ifname;
        if (plain.getBytes(StandardCharsets.UTF_8).length <= MAX_ALIAS) return plain;
        return hashedPrefix(kind, network) + Names.sha256Hex(plain);
    }

    private static String hashedPrefix(String kind, String network) {
        return kind + "#" + Names.sha256Hex(network).substring(0, 16) + "/";
    }

    static boolean isTagOf(String alias, String network) {
        return isTagOf(VETH, alias, network);
    }

    /** Whether a link's alias is a tag of this kind and network (of any attachment). */
    public static boolean isTagOf(String kind, String alias, String network) {
        if (alias == null) return false;
        String plainPrefix = kind + "/" + network + "/";
        if (alias.startsWith(plainPrefix)) {
            String[] rest = alias.substring(plainPrefix.length()).split("/", -1);
            return rest.length == 2 && !rest[0].isEmpty() && !rest[1].isEmpty();
        }
        return alias.startsWith(hashedPrefix(kind, network));
    }

    /** The tags of {@code valid}'s attachments: what GC keeps. */
    public static Set<String> tagsOf(String kind, String network, Collection<Attachment> valid) {
        Set<String> keep = new HashSet<>();
        for (Attachment a : valid) keep.add(tag(kind, network, a.containerId(), a.ifname()));
        return keep;
    }

    /**
     * Deletes this network's tagged links whose attachment is not in {@code valid}, and host veths
     * whose creator died before it could tag them (of any network: such a link belongs to no
     * attachment; {@link BirthMarks}); returns their names.
     */
    public static List<String> collect(Rtnl host, String network, Collection<Attachment> valid) {
        Set<String> keep = tagsOf(VETH, network, valid);
        List<String> removed = new ArrayList<>();
        List<Link> links = host.links();
        for (Link l : links) {
            if (!isTagOf(l.alias(), network) || keep.contains(l.alias())) continue;
            Links.deleteQuietly(host, l.name());
            removed.add(l.name());
        }
        removed.addAll(BirthMarks.collectOrphans(host, links));
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
