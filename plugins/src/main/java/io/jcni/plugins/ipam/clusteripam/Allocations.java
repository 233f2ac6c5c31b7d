package io.jcni.plugins.ipam.clusteripam;

import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.math.BigInteger;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
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
     * A free address of the set, walking from a random point of it so that hosts allocating at
     * once rarely pick the same one; empty when every address is taken. An excluded CIDR is
     * stepped over in one move (an IPv6 exclude can be 2^64 addresses).
     *
     * @param taken whether an address is known to be taken (the caller's knowledge, maybe stale:
     *     the create transaction decides)
     */
    public static Optional<IpAddr> pickFree(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, Predicate<IpAddr> taken,
            RandomGenerator random) {
        List<ClusterIpamConfig.Range> ranges = set.ranges();
        BigInteger[] size = new BigInteger[ranges.size()];
        BigInteger total = BigInteger.ZERO;
        for (int i = 0; i < size.length; i++) {
            ClusterIpamConfig.Range r = ranges.get(i);
            size[i] = r.last().toBigInteger().subtract(r.first().toBigInteger()).add(BigInteger.ONE);
            total = total.add(size[i]);
        }
        BigInteger offset = randomBelow(total, random), walked = BigInteger.ZERO;
        while (walked.compareTo(total) < 0) {
            int i = 0;
            BigInteger local = offset;
            while (local.compareTo(size[i]) >= 0) local = local.subtract(size[i++]);
            ClusterIpamConfig.Range r = ranges.get(i);
            IpAddr a = IpAddr.fromBigInteger(r.first().toBigInteger().add(local), r.subnet().isV6());
            BigInteger step = BigInteger.ONE;
            Cidr ex = cfg.excludedBy(a);
            if (ex != null) {
                IpAddr end = ex.last().compareTo(r.last()) < 0 ? ex.last() : r.last();
                step = end.toBigInteger().subtract(a.toBigInteger()).add(BigInteger.ONE);
            } else if (cfg.allocatable(r, a) && !taken.test(a)) {
                return Optional.of(a);
            }
            offset = offset.add(step).mod(total);
            walked = walked.add(step);
        }
        return Optional.empty();
    }

    /** The addresses of a window: an IPv4 /24, whose ip keys share one key prefix. */
    public static final int WINDOW = 256;

    /**
     * The key prefix that the ip keys of the IPv4 /24 around {@code ip} in {@code range}, and no
     * other ip keys, start with: dotted decimal ends each byte with a dot, so {@code ips/10.70.3.}
     * is not a prefix of {@code ips/10.70.31.5}. Null for IPv6, whose text form has no such prefix.
     */
    public static String windowPrefix(String prefix, Cidr range, IpAddr ip) {
        if (ip.isV6()) return null;
        String s = ip.toString();
        return rangeDir(prefix, range) + "ips/" + s.substring(0, s.lastIndexOf('.') + 1);
    }

    /**
     * A free address of the IPv4 /24 around {@code ip}, within {@code r}, walking it from a random
     * point; empty when {@code taken}, the excludes and the range's own rules leave none.
     */
    public static Optional<IpAddr> pickFreeInWindow(ClusterIpamConfig cfg, ClusterIpamConfig.Range r, IpAddr ip, Predicate<IpAddr> taken,
            RandomGenerator random) {
        if (ip.isV6()) return Optional.empty();
        long base = ip.toBigInteger().longValue() & ~(WINDOW - 1L);
        long first = Math.max(base, r.first().toBigInteger().longValue());
        long last = Math.min(base + WINDOW - 1, r.last().toBigInteger().longValue());
        if (first > last) return Optional.empty();
        long n = last - first + 1, start = random.nextLong(n);
        for (long k = 0; k < n; k++) {
            IpAddr a = IpAddr.fromBigInteger(BigInteger.valueOf(first + (start + k) % n), false);
            if (cfg.excludedBy(a) == null && cfg.allocatable(r, a) && !taken.test(a)) return Optional.of(a);
        }
        return Optional.empty();
    }

    /** The same, avoiding the addresses in {@code used}. */
    public static Optional<IpAddr> pickFree(ClusterIpamConfig cfg, ClusterIpamConfig.RangeSet set, Collection<IpAddr> used,
            RandomGenerator random) {
        Set<IpAddr> taken = used instanceof Set<IpAddr> s ? s : new HashSet<>(used);
        return pickFree(cfg, set, taken::contains, random);
    }

    /** Uniform in [0, n) (for n beyond a long, with a negligible bias). */
    static BigInteger randomBelow(BigInteger n, RandomGenerator random) {
        if (n.bitLength() < 63) return BigInteger.valueOf(random.nextLong(n.longValue()));
        byte[] b = new byte[n.bitLength() / 8 + 9];
        for (int i = 0; i < b.length; i++) b[i] = (byte) random.nextInt();
        return new BigInteger(1, b).mod(n);
    }
}
