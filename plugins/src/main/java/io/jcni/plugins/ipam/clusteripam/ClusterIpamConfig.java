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
 * The {@code ipam} section of {@code cluster-ipam}:
 * <pre>{"type":"cluster-ipam","etcdEndpoints":["http://10.0.0.1:2379"],"range":"10.70.0.0/16",
 *  "rangeStart":"10.70.0.10","rangeEnd":"10.70.255.250","gateway":"10.70.0.1","exclude":["10.70.1.0/24"],
 *  "routes":[{"dst":"0.0.0.0/0"}],"dns":{...},"etcdPrefix":"/jcni/ipam","timeout":5,"retries":50,"host":"node-1"}</pre>
 * {@code etcdEndpoints} may also be one comma-separated string (whereabouts' {@code etcd_host} style).
 * A secured etcd: {@code https://} endpoints, {@code etcdCACertFile}, {@code etcdCertFile} + {@code etcdKeyFile}
 * (PEM), {@code etcdUsername} + {@code etcdPasswordFile} (the password never sits in a conflist, which
 * runtimes copy and log).
 * The range's network and broadcast addresses and the gateway are never handed out. IPv4.
 *
 * @param first the lowest address that may be handed out
 * @param last the highest
 * @param host this host's name in the per-host index ({@code host}, default the hostname); null
 *     when there is none usable, and then allocations are not indexed for the host's reconcile
 * @param etcdSecurity the TLS files and user, without the password (read from {@code etcdPasswordFile} when connecting)
 * @param etcdPasswordFile the file holding {@code etcdUsername}'s password (one line), or null
 */
public record ClusterIpamConfig(List<String> etcdEndpoints, String etcdPrefix, Cidr range, IpAddr first, IpAddr last, IpAddr gateway,
        List<Cidr> exclude, List<Result.Route> routes, Result.Dns dns, Duration timeout, int retries, String host,
        io.jcni.etcd.EtcdSecurity etcdSecurity, java.nio.file.Path etcdPasswordFile) {

    public static ClusterIpamConfig parse(Map<String, Object> conf) {
        Map<String, Object> ipam = IpamConf.ipam(conf);
        List<String> eps;
        if (ipam.get("etcdEndpoints") instanceof String s) eps = io.jcni.etcd.EtcdClient.splitEndpoints(s);
        else eps = Fields.stringList(ipam, "etcdEndpoints", "ipam");
        if (eps == null || eps.isEmpty()) throw invalid("ipam.etcdEndpoints is required (http://host:port, ...)");
        String rs = Fields.requireString(ipam, "range", "ipam");
        Cidr range = Cidr.tryParse(rs);
        if (range == null || range.isV6()) throw invalid("ipam.range must be an IPv4 CIDR: " + rs);
        range = range.masked();
        if (range.prefix() > 30) throw invalid("ipam.range " + range + " has no room for addresses");
        IpAddr first = addr(ipam, "rangeStart", range, range.network().next());
        IpAddr last = addr(ipam, "rangeEnd", range, range.last().previous());
        if (first.compareTo(last) > 0) throw invalid("ipam.rangeStart is above ipam.rangeEnd");
        IpAddr gw = addr(ipam, "gateway", range, null);
        List<Cidr> exclude = new ArrayList<>();
        List<String> ex = Fields.stringList(ipam, "exclude", "ipam");
        if (ex != null) {
            for (String e : ex) {
                Cidr c = Cidr.tryParse(e.contains("/") ? e : e + "/32");
                if (c == null || c.isV6()) throw invalid("ipam.exclude: not an IPv4 CIDR: " + e);
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
        return new ClusterIpamConfig(eps, prefix, range, first, last, gw, exclude, IpamConf.routes(ipam), IpamConf.dns(ipam),
                Duration.ofSeconds(t == null ? 5 : t), r == null ? 100 : r.intValue(), host, security, path(pwFile));
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

    /** Whether {@code ip} may be handed out (in [first, last], not the gateway, not excluded). */
    public boolean allocatable(IpAddr ip) {
        if (ip.compareTo(first) < 0 || ip.compareTo(last) > 0 || ip.equals(gateway)) return false;
        for (Cidr c : exclude) if (c.contains(ip)) return false;
        return true;
    }

    private static IpAddr addr(Map<String, Object> ipam, String key, Cidr range, IpAddr dflt) {
        String s = Fields.string(ipam, key, "ipam");
        if (s == null) return dflt;
        IpAddr a = IpAddr.tryParse(s);
        if (a == null || a.isV6() || !range.contains(a)) throw invalid("ipam." + key + " " + s + " is not an address in " + range);
        return a;
    }

    private static CniException invalid(String msg) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg);
    }
}
