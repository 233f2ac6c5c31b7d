package io.jcni.plugins.ipam.clusteripam;

import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Collection;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * The etcd layout and the choice of a free address. Pure.
 *
 * <pre>
 * &lt;prefix&gt;/&lt;10.70.0.0-16&gt;/ips/&lt;ip&gt;                         = &lt;containerID&gt;/&lt;ifname&gt;   one key per address
 * &lt;prefix&gt;/&lt;10.70.0.0-16&gt;/owners/&lt;containerID&gt;/&lt;ifname&gt;   = &lt;ip&gt;                     the reverse index
 * &lt;prefix&gt;/hosts/&lt;host&gt;/&lt;10.70.0.0-16&gt;/&lt;containerID&gt;/&lt;ifname&gt; = {@link HostRecord}   the host's own index
 * </pre>
 * Both keys of an allocation are created in one transaction that requires both to be absent, so
 * two hosts can never hold the same address and a killed plugin leaves both keys or neither. The
 * host's index entry is written in the same transaction (unconditionally: a stale one of an
 * earlier attachment of the same name may be there), so a host can list its own allocations
 * without reading the cluster's ({@link HostReconcile}).
 */
public final class Allocations {
    private Allocations() {}

    public static String rangeDir(String prefix, Cidr range) {
        return prefix + "/" + rangeId(range) + "/";
    }

    /** A range as one key segment: {@code 10.70.0.0-16}. */
    public static String rangeId(Cidr range) {
        return range.network() + "-" + range.prefix();
    }

    /** The range a {@link #rangeId} names, or null. */
    public static Cidr rangeOfId(String id) {
        int dash = id.lastIndexOf('-');
        return dash <= 0 ? null : Cidr.tryParse(id.substring(0, dash) + "/" + id.substring(dash + 1));
    }

    /** Where one host's index of its allocations lives. */
    public static String hostsDir(String prefix, String host) {
        return prefix + "/hosts/" + host + "/";
    }

    public static String hostKey(String prefix, String host, Cidr range, Attachment a) {
        return hostsDir(prefix, host) + rangeId(range) + "/" + a.containerId() + "/" + a.ifname();
    }

    /** The range and attachment a host index key names. */
    public record HostEntry(Cidr range, Attachment attachment) {}

    /** What a key under {@link #hostsDir} names, or null when it is not a host index key. */
    public static HostEntry hostEntryOf(String prefix, String host, String key) {
        String dir = hostsDir(prefix, host);
        if (!key.startsWith(dir)) return null;
        String[] p = key.substring(dir.length()).split("/", -1);
        if (p.length != 3 || p[1].isEmpty() || p[2].isEmpty()) return null;
        Cidr range = rangeOfId(p[0]);
        return range == null ? null : new HostEntry(range, new Attachment(p[1], p[2]));
    }

    public static String ipKey(String prefix, Cidr range, IpAddr ip) {
        return rangeDir(prefix, range) + "ips/" + ip;
    }

    public static String ownerKey(String prefix, Cidr range, Attachment a) {
        return rangeDir(prefix, range) + "owners/" + a.containerId() + "/" + a.ifname();
    }

    public static String ownerValue(Attachment a) {
        return a.containerId() + "/" + a.ifname();
    }

    /** The attachment an owner key names, or null. */
    public static Attachment ownerOf(String prefix, Cidr range, String ownerKey) {
        String dir = rangeDir(prefix, range) + "owners/";
        if (!ownerKey.startsWith(dir)) return null;
        String rest = ownerKey.substring(dir.length());
        int slash = rest.lastIndexOf('/');
        return slash <= 0 ? null : new Attachment(rest.substring(0, slash), rest.substring(slash + 1));
    }

    /** The address an ip key names, or null. */
    public static IpAddr ipOf(String prefix, Cidr range, String ipKey) {
        String dir = rangeDir(prefix, range) + "ips/";
        return ipKey.startsWith(dir) ? IpAddr.tryParse(ipKey.substring(dir.length())) : null;
    }

    /**
     * A free address, walking from a random point of the range so that hosts allocating at once
     * rarely pick the same one; empty when the range is full.
     */
    public static Optional<IpAddr> pickFree(ClusterIpamConfig cfg, Collection<IpAddr> used, RandomGenerator random) {
        Set<IpAddr> taken = used instanceof Set<IpAddr> s ? s : new HashSet<>(used);
        long lo = toLong(cfg.first()), hi = toLong(cfg.last()), n = hi - lo + 1;
        long start = random.nextLong(n);
        for (long i = 0; i < n; i++) {
            IpAddr a = fromLong(lo + (start + i) % n);
            if (!taken.contains(a) && cfg.allocatable(a)) return Optional.of(a);
        }
        return Optional.empty();
    }

    static long toLong(IpAddr a) {
        byte[] b = a.bytes();
        return ((b[0] & 0xffL) << 24) | ((b[1] & 0xffL) << 16) | ((b[2] & 0xffL) << 8) | (b[3] & 0xffL);
    }

    static IpAddr fromLong(long v) {
        return new IpAddr(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
    }
}
