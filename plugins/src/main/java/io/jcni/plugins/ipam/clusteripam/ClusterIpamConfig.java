package io.jcni.plugins.ipam.clusteripam;

import io.jcni.plugins.ipam.IpamConf;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code ipam} section of {@code cluster-ipam}, one range (the original form):
 * <pre>{"type":"cluster-ipam","etcdEndpoints":["http://10.0.0.1:2379"],"range":"10.70.0.0/16",
 *  "rangeStart":"10.70.0.10","rangeEnd":"10.70.255.250","gateway":"10.70.0.1","exclude":["10.70.1.0/24"],
 *  "routes":[{"dst":"0.0.0.0/0"}],"dns":{...},"etcdPrefix":"/jcni/ipam","timeout":5,"retries":50,"host":"node-1"}</pre>
 * or several range sets, as host-local's {@code ranges} (one address from each set; a set is one
 * family; IPv6 as well as IPv4):
 * <pre>"ranges":[[{"subnet":"10.70.0.0/16","gateway":"10.70.0.1"}],[{"subnet":"fd00:70::/64","rangeStart":"fd00:70::10"}]]</pre>
 * {@code etcdEndpoints} may also be one comma-separated string (whereabouts' {@code etcd_host} style).
 * A secured etcd: {@code https://} endpoints, {@code etcdCACertFile}, {@code etcdCertFile} + {@code etcdKeyFile}
 * (PEM), {@code etcdUsername} + {@code etcdPasswordFile} (the password never sits in a conflist, which
 * runtimes copy and log).
 * A range's network address, IPv4 broadcast address and gateway are never handed out; a range has
 * no gateway unless one is given (unlike host-local, which defaults it to the first address).
 *
 * @param rangeSets the range sets in order; the result lists one address per set in this order
 * @param host this host's name in the per-host index ({@code host}, default the hostname); null
 *     when there is none usable, and then allocations are not indexed for the host's reconcile
 * @param etcdSecurity the TLS files and user, without the password (read from {@code etcdPasswordFile} when connecting)
 * @param etcdPasswordFile the file holding {@code etcdUsername}'s password (one line), or null
 */
public record ClusterIpamConfig(List<String> etcdEndpoints, String etcdPrefix, List<RangeSet> rangeSets,
        List<Cidr> exclude, List<Result.Route> routes, Result.Dns dns, Duration timeout, int retries, String host,
        io.jcni.etcd.EtcdSecurity etcdSecurity, java.nio.file.Path etcdPasswordFile) {

    /**
     * One subnet and the window [first, last] of it that may be handed out. Its allocations live
     * under {@link Allocations#rangeDir} of {@code subnet}.
     *
     * @param gateway returned in the result for an address of this range, never allocated; or null
     */
    public record Range(Cidr subnet, IpAddr first, IpAddr last, IpAddr gateway) {
        public boolean contains(IpAddr ip) {
            return ip.isV6() == subnet.isV6() && ip.compareTo(first) >= 0 && ip.compareTo(last) <= 0;
        }

        /** Whether the windows share an address. */
        boolean overlaps(Range o) {
            return subnet.isV6() == o.subnet.isV6() && first.compareTo(o.last) <= 0 && o.first.compareTo(last) <= 0;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Range r && subnet.equals(r.subnet) && first.equals(r.first) && last.equals(r.last)
                    && java.util.Objects.equals(gateway, r.gateway);
        }

        @Override
        public int hashCode() {
            return subnet.hashCode() * 31 + first.hashCode();
        }
    }

    /** Ranges of one family; an attachment gets one address from the set, from any of its ranges. */
    public record RangeSet(List<Range> ranges) {
        public boolean isV6() {
            return ranges.getFirst().subnet().isV6();
        }

        /** The range holding {@code ip}, or null. */
        public Range rangeOf(IpAddr ip) {
            for (Range r : ranges) if (r.contains(ip)) return r;
            return null;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof RangeSet s && ranges.equals(s.ranges);
        }

        @Override
        public int hashCode() {
            return ranges.hashCode();
        }
    }

    /** Every range of every set, in order. */
    public List<Range> allRanges() {
        List<Range> out = new ArrayList<>();
        for (RangeSet s : rangeSets) out.addAll(s.ranges());
        return out;
    }

    public static ClusterIpamConfig parse(Map<String, Object> conf) {
        Map<String, Object> ipam = IpamConf.ipam(conf);
        List<String> eps;
        if (ipam.get("etcdEndpoints") instanceof String s) eps = io.jcni.etcd.EtcdClient.splitEndpoints(s);
        else eps = Fields.stringList(ipam, "etcdEndpoints", "ipam");
        if (eps == null || eps.isEmpty()) throw invalid("ipam.etcdEndpoints is required (http://host:port, ...)");
        List<RangeSet> sets = rangeSets(ipam);
        List<Cidr> exclude = new ArrayList<>();
        List<String> ex = Fields.stringList(ipam, "exclude", "ipam");
        if (ex != null) {
            for (String e : ex) {
                Cidr c = Cidr.tryParse(e);
                if (c == null) {
                    IpAddr a = IpAddr.tryParse(e);
                    c = a == null ? null : Cidr.host(a);
                }
                if (c == null) throw invalid("ipam.exclude: not a CIDR or an address: " + e);
                exclude.add(c.masked());
            }
        }
        String prefix = Fields.string(ipam, "etcdPrefix", "ipam");
        if (prefix == null || prefix.isEmpty()) prefix = "/jcni/ipam";
        while (prefix.endsWith("/")) prefix = prefix.substring(0, prefix.length() - 1);
        Long t = Fields.integer(ipam, "timeout", "ipam");
        Long r = Fields.integer(ipam, "retries", "ipam");
        if (t != null && (t < 1 || t > 300)) throw invalid("ipam.timeout: seconds in [1, 300]");
        if (r != null && (r < 1 || r > 10_000)) throw invalid("ipam.retries: in [1, 10000]");
        String host = Fields.string(ipam, "host", "ipam");
        if (host != null && !io.jcni.types.Names.isCniName(host)) throw invalid("ipam.host: letters, digits, '.', '-' and '_' only: " + host);
        if (host == null) host = hostname();
        String ca = Fields.string(ipam, "etcdCACertFile", "ipam"), cert = Fields.string(ipam, "etcdCertFile", "ipam");
        String key = Fields.string(ipam, "etcdKeyFile", "ipam"), user = Fields.string(ipam, "etcdUsername", "ipam");
        String pwFile = Fields.string(ipam, "etcdPasswordFile", "ipam");
        if (Fields.present(ipam, "etcdPassword")) throw invalid("ipam.etcdPassword: put the password in a file and name it in ipam.etcdPasswordFile");
        if ((cert == null) != (key == null)) throw invalid("ipam.etcdCertFile and ipam.etcdKeyFile go together (the client certificate and its key)");
        if ((user == null) != (pwFile == null)) throw invalid("ipam.etcdUsername and ipam.etcdPasswordFile go together");
        var security = new io.jcni.etcd.EtcdSecurity(path(ca), path(cert), path(key), user, null);
        return new ClusterIpamConfig(eps, prefix, sets, List.copyOf(exclude), IpamConf.routes(ipam), IpamConf.dns(ipam),
                Duration.ofSeconds(t == null ? 5 : t), r == null ? 100 : r.intValue(), host, security, path(pwFile));
    }

    /** {@code range} (+ rangeStart, rangeEnd, gateway at the top) or {@code ranges}, not both; sets and ranges must not overlap. */
    private static List<RangeSet> rangeSets(Map<String, Object> ipam) {
        List<Object> raw = Fields.list(ipam, "ranges", "ipam");
        String single = Fields.string(ipam, "range", "ipam");
        List<RangeSet> sets = new ArrayList<>();
        if (single != null && raw != null) throw invalid("ipam.range and ipam.ranges: give one of them");
        if (single != null) {
            sets.add(new RangeSet(List.of(range(single, ipam, "ipam"))));
        } else if (raw != null && !raw.isEmpty()) {
            for (int i = 0; i < raw.size(); i++) {
                String where = "ipam.ranges[" + i + "]";
                if (!(raw.get(i) instanceof List<?> set) || set.isEmpty()) throw invalid(where + ": a non-empty list of ranges");
                List<Range> ranges = new ArrayList<>();
                for (int j = 0; j < set.size(); j++) {
                    Map<String, Object> o = Fields.element(set.get(j), where);
                    String w = where + "[" + j + "]";
                    ranges.add(range(Fields.requireString(o, "subnet", w), o, w));
                }
                for (Range x : ranges) {
                    if (x.subnet().isV6() != ranges.getFirst().subnet().isV6()) throw invalid(where + ": mixes IPv4 and IPv6 (one family per range set)");
                }
                sets.add(new RangeSet(List.copyOf(ranges)));
            }
        } else {
            throw invalid("ipam.range (a CIDR) or ipam.ranges (host-local's range sets) is required");
        }
        List<Range> all = new ArrayList<>();
        for (RangeSet s : sets) all.addAll(s.ranges());
        for (int i = 0; i < all.size(); i++) {
            for (int j = i + 1; j < all.size(); j++) {
                if (all.get(i).overlaps(all.get(j))) throw invalid("ipam: ranges " + all.get(i).subnet() + " and " + all.get(j).subnet() + " overlap");
            }
        }
        return List.copyOf(sets);
    }

    private static Range range(String text, Map<String, Object> o, String where) {
        Cidr subnet = Cidr.tryParse(text);
        if (subnet == null) throw invalid(where + ": not a CIDR: " + text);
        subnet = subnet.masked();
        if (subnet.prefix() > subnet.address().bits() - 2) throw invalid(where + ": " + subnet + " has no room for addresses");
        IpAddr lastHost = subnet.isV6() ? subnet.last() : subnet.last().previous();
        IpAddr first = addr(o, "rangeStart", where, subnet, subnet.network().next());
        IpAddr last = addr(o, "rangeEnd", where, subnet, lastHost);
        if (first.compareTo(last) > 0) throw invalid(where + ": rangeStart is above rangeEnd");
        return new Range(subnet, first, last, addr(o, "gateway", where, subnet, null));
    }

    private static java.nio.file.Path path(String s) {
        return s == null || s.isEmpty() ? null : java.nio.file.Path.of(s);
    }

    /** The kernel's hostname (of this UTS namespace) when it is usable as a key segment, else null. */
    public static String hostname() {
        try {
            String h = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/hostname")).strip();
            return io.jcni.types.Names.isCniName(h) && h.length() <= 253 ? h : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    /** Whether {@code ip} may be handed out from {@code r}: in its window, not its network, broadcast or gateway, not excluded. */
    public boolean allocatable(Range r, IpAddr ip) {
        if (!r.contains(ip) || ip.equals(r.gateway()) || ip.equals(r.subnet().network())) return false;
        if (!r.subnet().isV6() && ip.equals(r.subnet().last())) return false;
        return excludedBy(ip) == null;
    }

    /** The exclude entry holding {@code ip}, or null. */
    Cidr excludedBy(IpAddr ip) {
        for (Cidr c : exclude) if (c.isV6() == ip.isV6() && c.contains(ip)) return c;
        return null;
    }

    private static IpAddr addr(Map<String, Object> o, String key, String where, Cidr range, IpAddr dflt) {
        String s = Fields.string(o, key, where);
        if (s == null) return dflt;
        IpAddr a = IpAddr.tryParse(s);
        if (a == null || a.isV6() != range.isV6() || !range.contains(a)) throw invalid(where + "." + key + " " + s + " is not an address in " + range);
        return a;
    }

    private static CniException invalid(String msg) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg);
    }
}
