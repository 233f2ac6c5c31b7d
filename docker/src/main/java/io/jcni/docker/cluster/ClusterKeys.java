package io.jcni.docker.cluster;

import io.jcni.types.IpAddr;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where a cluster network lives in the shared store (etcd keys {@code PREFIX/KIND/KEY}, the
 * prefix {@code /jcni/docker} by default):
 *
 * <pre>
 * clusters/NAME/network         the definition: IPv4 (and IPv6) subnet, range, gateway, internal, VNI (written once)
 * clusters/NAME/pool            the shared IPv4 pool: every container address any host took (compare-and-swap)
 * clusters/NAME/pool6           the shared IPv6 pool of a network created with --ipv6 (the same, for IPv6)
 * clusters/NAME/hosts/HOST      a host that has the network (leased: goes with the host)
 * clusters/NAME/endpoints/EP    a container's MAC, addresses and its host's VTEP (leased)
 * vnis/VNI                      which cluster holds a VNI (so two clusters never share one)
 * </pre>
 *
 * A host is named by its underlay address, which is what the other hosts need of it anyway.
 */
public final class ClusterKeys {
    private ClusterKeys() {}

    public static final String CLUSTERS = "clusters";
    public static final String VNIS = "vnis";
    public static final String NETWORK = "network";
    public static final String POOL = "pool";
    public static final String POOL6 = "pool6";
    /** Cluster names are etcd key segments and what users type after {@code -o jcni.cluster=}. */
    public static final Pattern NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}");
    /** VNIs jcni hands out: above the 1-4095 that people pick by hand, below the 24-bit limit. */
    public static final int FIRST_VNI = 4096, VNI_SPAN = 1 << 20;
    /** IANA's VXLAN port (flannel's devices use the kernel's 8472, so both can share an underlay). */
    public static final int VXLAN_PORT = 4789;
    /** VXLAN over IPv4: outer IPv4 (20) + UDP (8) + VXLAN (8) + inner Ethernet (14). */
    public static final int VXLAN_OVERHEAD = 50;

    /** The shared pool of one address family. */
    public static String pool(boolean v6) {
        return v6 ? POOL6 : POOL;
    }

    /** The kind holding {@link #NETWORK} and the pools of a cluster. */
    public static String cluster(String name) {
        return CLUSTERS + "/" + name;
    }

    public static String hosts(String name) {
        return cluster(name) + "/hosts";
    }

    public static String endpoints(String name) {
        return cluster(name) + "/endpoints";
    }

    /** The host key of an underlay address. */
    public static String host(IpAddr vtep) {
        return vtep.toString().replace(':', '_');
    }

    /** The cluster an etcd key below {@code prefix} belongs to, if it is a cluster's key. */
    public static Optional<String> clusterOf(String prefix, String etcdKey) {
        String p = prefix + "/" + CLUSTERS + "/";
        if (!etcdKey.startsWith(p)) return Optional.empty();
        String rest = etcdKey.substring(p.length());
        int slash = rest.indexOf('/');
        String name = slash < 0 ? rest : rest.substring(0, slash);
        return NAME.matcher(name).matches() ? Optional.of(name) : Optional.empty();
    }

    /** Where the search for a free VNI starts for a cluster: spread by name, so clusters rarely probe each other's. */
    public static int firstVniFor(String name) {
        int h = 0;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) h = 31 * h + (b & 0xff);
        return FIRST_VNI + Math.floorMod(h, VNI_SPAN);
    }

    /** The n-th VNI tried for a cluster (wrapping within the span). */
    public static int vniCandidate(String name, int n) {
        return FIRST_VNI + Math.floorMod(firstVniFor(name) - FIRST_VNI + n, VNI_SPAN);
    }

    /** The VXLAN device of a cluster network on each host. */
    public static String vxlanDevice(int vni) {
        return "jcvx" + vni;
    }

    /**
     * A container's MAC on a cluster network, from its IPv4 address (as Docker's bridge does with
     * 02:42): addresses are unique across the cluster, so the MACs are too, and every host can tell
     * what MAC an address has without asking.
     */
    public static String macFor(IpAddr v4) {
        byte[] a = v4.bytes();
        return String.format("02:6a:%02x:%02x:%02x:%02x", a[0] & 0xff, a[1] & 0xff, a[2] & 0xff, a[3] & 0xff);
    }
}
