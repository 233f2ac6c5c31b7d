package io.jcni.overlay;

import io.jcni.common.Flags;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The agent's flags, named as flanneld's where one exists.
 *
 * @param iface          the first {@code --iface} (name or IPv4 address); empty: none given
 * @param publicIp       the address other hosts reach us on; empty: the interface's first IPv4 address
 * @param leaseTtl       TTL of the etcd lease holding our subnet (renewed at a third of it); a dead host's subnet frees after it
 * @param etcdTimeout    bound on every etcd request
 * @param ipamPrefix     cluster-ipam's {@code etcdPrefix} whose allocations of this host the agent reconciles
 * @param ipamHost       this host's name in cluster-ipam's index (its {@code host}); null: no reconcile
 * @param ipamReconcile  how often the reconcile runs; zero: never
 * @param ipamGrace      an allocation younger than this is never released (its ADD may be running)
 * @param watchDeadline  a lease watch silent for longer is taken for dead and re-listed (etcd sends progress every 10 min when idle)
 * @param underlayChoice how the interface for host-to-host traffic is found: every {@code --iface}, {@code --iface-regex}, {@code --iface-can-reach}
 * @param etcdSecurity   flanneld's --etcd-cafile/--etcd-certfile/--etcd-keyfile/--etcd-username/--etcd-password
 * @param publicIpv6     {@code --public-ipv6}: the IPv6 address other hosts reach us on; empty: the interface's first global IPv6 address
 */
public record AgentOptions(List<String> etcdEndpoints, String etcdPrefix, String iface, String publicIp, Path subnetFile,
        boolean ipMasq, Duration leaseTtl, Duration etcdTimeout, String ipamPrefix, String ipamHost, Duration ipamReconcile,
        Duration ipamGrace, Duration watchDeadline, UnderlayChoice underlayChoice, io.jcni.etcd.EtcdSecurity etcdSecurity, String publicIpv6) {

    public static final Set<String> VALUE_FLAGS = union(io.jcni.etcd.EtcdSecurity.FLAGS, Set.of("--etcd-endpoints", "--etcd-prefix", "--iface", "--public-ip", "--public-ipv6",
            "--subnet-file", "--subnet-lease-ttl", "--etcd-timeout", "--ipam-prefix", "--ipam-host", "--ipam-reconcile-every",
            "--ipam-grace", "--watch-deadline", "--iface-regex", "--iface-can-reach"));
    public static final Set<String> SWITCH_FLAGS = Set.of("--ip-masq");

    public static AgentOptions parse(List<String> args) {
        List<String> eps = List.of("http://127.0.0.1:2379");
        String prefix = "/coreos.com/network", iface = "", pub = "", pub6 = "";
        Path subnetFile = Path.of("/run/flannel/subnet.env");
        boolean masq = false;
        Duration ttl = Duration.ofSeconds(60), timeout = Duration.ofSeconds(5);
        String ipamPrefix = "/jcni/ipam", ipamHost = null;
        Duration reconcile = Duration.ofSeconds(60), grace = Duration.ofMinutes(2), watchDeadline = Duration.ofMinutes(15);
        io.jcni.etcd.EtcdSecurity security = io.jcni.etcd.EtcdSecurity.NONE;
        List<String> ifaces = new ArrayList<>(), regexes = new ArrayList<>(); // flanneld's repeatable flags
        String canReach = "";
        Flags f = new Flags(args);
        while (f.next()) {
            String a = f.name();
            if (a.equals("--ip-masq")) {
                masq = f.switchValue();
                continue;
            }
            if (!VALUE_FLAGS.contains(a)) throw new IllegalArgumentException("overlay: unknown option " + f.token());
            switch (a) {
                case "--subnet-lease-ttl" -> ttl = f.duration(Duration.ofSeconds(2), MAX_PERIOD);
                case "--etcd-timeout" -> timeout = f.duration(Duration.ofSeconds(1), MAX_PERIOD);
                case "--ipam-reconcile-every" -> reconcile = f.duration(Duration.ZERO, MAX_PERIOD);
                case "--ipam-grace" -> grace = f.duration(Duration.ofSeconds(1), MAX_PERIOD);
                case "--watch-deadline" -> watchDeadline = f.duration(Duration.ofSeconds(1), MAX_PERIOD);
                case "--subnet-file" -> subnetFile = f.path();
                default -> {
                    String v = f.value();
                    if (io.jcni.etcd.EtcdSecurity.FLAGS.contains(a)) {
                        security = security.withFlag(a, v);
                        continue;
                    }
                    switch (a) {
                        case "--etcd-endpoints" -> eps = io.jcni.etcd.EtcdClient.splitEndpoints(v);
                        case "--etcd-prefix" -> prefix = withoutTrailingSlash(v);
                        case "--iface" -> ifaces.add(v);
                        case "--iface-regex" -> regexes.add(v);
                        case "--iface-can-reach" -> canReach = v;
                        case "--public-ip" -> pub = v;
                        case "--public-ipv6" -> pub6 = checkedIpv6(v);
                        case "--ipam-prefix" -> ipamPrefix = withoutTrailingSlash(v);
                        case "--ipam-host" -> ipamHost = checkedHostName(a, v);
                        default -> throw new AssertionError(a);
                    }
                }
            }
        }
        if (eps.isEmpty()) throw new IllegalArgumentException("--etcd-endpoints: no endpoint");
        if (ipamHost == null) ipamHost = io.jcni.plugins.ipam.clusteripam.ClusterIpamConfig.hostname(); // cluster-ipam's default
        if (!ifaces.isEmpty()) iface = ifaces.getFirst();
        return new AgentOptions(eps, prefix, iface, pub, subnetFile, masq, ttl, timeout, ipamPrefix, ipamHost, reconcile, grace, watchDeadline,
                new UnderlayChoice(ifaces, regexes, canReach), security.validated(), pub6);
    }

    private static String withoutTrailingSlash(String v) {
        return v.endsWith("/") ? v.substring(0, v.length() - 1) : v;
    }

    /** {@code --public-ipv6}'s value, when it is an IPv6 address. */
    private static String checkedIpv6(String v) {
        io.jcni.types.IpAddr ip6 = io.jcni.types.IpAddr.tryParse(v);
        if (ip6 == null || !ip6.isV6()) throw new IllegalArgumentException("--public-ipv6: not an IPv6 address: " + v);
        return v;
    }

    /** {@code --ipam-host}'s value, when it is a name cluster-ipam's index can hold. */
    private static String checkedHostName(String flag, String v) {
        if (!io.jcni.types.Names.isCniName(v)) throw new IllegalArgumentException(flag + ": letters, digits, '.', '-' and '_' only: " + v);
        return v;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new java.util.HashSet<>(a);
        u.addAll(b);
        return Set.copyOf(u);
    }

    /** The longest period any of the agent's durations takes: a week. */
    private static final Duration MAX_PERIOD = Duration.ofDays(7);

    public String configKey() {
        return etcdPrefix + "/config";
    }
}
