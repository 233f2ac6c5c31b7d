package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Dual stack and IPv6 only in the overlay lab (netns hosts with IPv4 and IPv6 on one underlay, a
 * real etcd, one jcnid --overlay per host): pods on different hosts reach each other over both
 * families, with DF-sized packets, over VXLAN and host-gw; a lease written as flanneld writes it
 * is programmed.
 */
@Tag("root")
class DualStackLabTest {
    private static final int HOSTS = 3;
    /** The IPv6 default routes' gateway: on the underlay's /64, held by nobody (the hosts reach each other on-link). */
    private static final String UNDERLAY_GW6 = "fd77::1";

    /** Hosts 1..n up with IPv4 and IPv6 underlay addresses and agents on {@code --iface eth0}; their subnet.env texts. */
    private static Map<Integer, String> bringUp(Lab lab, String netConf, int n) throws Exception {
        return bringUp(lab, netConf, n, i -> List.of("--iface", "eth0"), false);
    }

    /**
     * The same with host i's agent finding its underlay by {@code underlay.apply(i)}; with
     * {@code ipv6Default} each host also gets an IPv6 default route on eth0 (its IPv4 stays the
     * connected /24 to etcd, without a default route).
     */
    private static Map<Integer, String> bringUp(Lab lab, String netConf, int n, IntFunction<List<String>> underlay, boolean ipv6Default)
            throws Exception {
        lab.start(netConf);
        Map<Integer, String> envs = new LinkedHashMap<>();
        for (int i = 1; i <= n; i++) {
            lab.addHost(i);
            lab.enableIpv6(i);
            if (ipv6Default) Lab.sh("ip", "-n", lab.host(i), "-6", "route", "add", "default", "via", UNDERLAY_GW6, "dev", "eth0");
            lab.startAgentOn(i, underlay.apply(i)); // --public-ipv6 not given: the agent takes eth0's global IPv6 address, as flanneld
        }
        for (int i = 1; i <= n; i++) envs.put(i, lab.awaitSubnetEnvText(i));
        return envs;
    }

    private static Cidr subnet6(String env) {
        Cidr c = SubnetEnv.cidr(env, "FLANNEL_IPV6_SUBNET");
        assertTrue(c != null && c.isV6(), env);
        return c.masked();
    }

    private static int mtu(String env) {
        for (String line : env.split("\n")) {
            if (line.startsWith("FLANNEL_MTU=")) return Integer.parseInt(line.substring(12));
        }
        throw new AssertionError(env);
    }

    /** Dual stack over VXLAN and host-gw: pods reach each other over IPv4 and IPv6, DF-sized packets included. */
    private static void dualStack(String backend, int wantMtu, String device6Check) throws Exception {
        try (Lab lab = new Lab()) {
            Map<Integer, String> envs = bringUp(lab, "{\"Network\":\"10.68.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd68:68::/56\","
                    + "\"Backend\":{\"Type\":\"" + backend + "\"}}", HOSTS);
            long started = System.nanoTime(); // every agent runs: its route check is due within 11 s
            Map<Integer, String> pods4 = new LinkedHashMap<>(), pods6 = new LinkedHashMap<>();
            for (int i = 1; i <= HOSTS; i++) {
                String env = envs.get(i);
                assertTrue(env.matches("FLANNEL_NETWORK=10\\.68\\.0\\.0/16\nFLANNEL_SUBNET=10\\.68\\.\\d+\\.1/24\nFLANNEL_IPV6_NETWORK=fd68:68::/56\n"
                        + "FLANNEL_IPV6_SUBNET=fd68:68:0:[0-9a-f]+::1/64\nFLANNEL_MTU=" + wantMtu + "\nFLANNEL_IPMASQ=true\n"), "flanneld's lines and order:\n" + env);
                pods4.put(i, lab.addPod(i, SubnetEnv.read(lab.subnetFile(i))));
                pods6.put(i, lab.addPod6(i, subnet6(env), 0));
            }
            // every lease is dual-stack, in flanneld's key form, with PublicIPv6
            String keys = lab.etcdctl("get", "--prefix", "--keys-only", Lease.subnetsDir(lab.prefix)).stdout();
            for (int i = 1; i <= HOSTS; i++) {
                Cidr s4 = SubnetEnv.read(lab.subnetFile(i)).subnet().masked(), s6 = subnet6(envs.get(i));
                assertTrue(keys.contains(Lease.key(lab.prefix, s4, s6)), keys);
                String value = lab.etcdctl("get", "--print-value-only", Lease.key(lab.prefix, s4, s6)).stdout();
                assertTrue(value.contains("\"PublicIPv6\":\"" + Lab.hostIp6(i) + "\""), value);
            }
            if (device6Check != null) {
                String link = Lab.sh("ip", "-d", "-n", lab.host(1), "link", "show", "flannel-v6.1");
                assertTrue(link.contains("vxlan id 1") && link.contains("local " + Lab.hostIp6(1)) && link.contains("mtu " + wantMtu), link);
            }
            // host 2's lease reaches host 1 through its watch, which may lag host 2's subnet.env: wait for the route
            String want6 = device6Check != null ? "dev flannel-v6.1" : "via " + Lab.hostIp6(2) + " dev eth0";
            String subnet6Of2 = subnet6(envs.get(2)).toString();
            try {
                Lab.waitFor("host 1's IPv6 route to host 2's subnet " + subnet6Of2 + " (" + want6 + ")", Duration.ofSeconds(20),
                        () -> Lab.sh("ip", "-n", lab.host(1), "-6", "route", "show", subnet6Of2).contains(want6));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nroutes: " + Lab.sh("ip", "-n", lab.host(1), "-6", "route") + "\n" + lab.log(1), e);
            }
            int mtu = mtu(envs.get(1));
            for (int from = 1; from <= HOSTS; from++) {
                for (int to = 1; to <= HOSTS; to++) {
                    if (from == to) continue;
                    int f = from, t = to;
                    Lab.waitFor("pod " + f + " -> pod " + t + " (IPv4)\n" + lab.log(f), Duration.ofSeconds(30), () -> lab.ping(lab.pod(f), pods4.get(t), -1));
                    Lab.waitFor("pod " + f + " -> pod " + t + " (IPv6)\n" + lab.log(f), Duration.ofSeconds(30), () -> lab.ping(lab.pod(f), pods6.get(t), -1));
                }
            }
            // DF-sized: IPv4 header 20 + ICMP 8, IPv6 header 40 + ICMPv6 8
            assertTrue(lab.ping(lab.pod(1), pods4.get(2), mtu - 28), "IPv4 DF " + (mtu - 28));
            assertTrue(lab.ping(lab.pod(1), pods6.get(2), mtu - 48), "IPv6 DF " + (mtu - 48));
            assertTrue(lab.ping(lab.pod(3), pods6.get(1), mtu - 48), "IPv6 DF " + (mtu - 48));
            String masq = Lab.sh("nsenter", "--net=/var/run/netns/" + lab.host(1), "nft", "list", "chain", "inet", "jcni", OverlayMasq.CHAIN);
            assertTrue(masq.contains("ip6 saddr fd68:68::/56 ip6 daddr != ff00::/8 masquerade"), "--ip-masq for IPv6: " + masq);
            lab.assertRouteCheckFoundNothingMissing(HOSTS, started); // both families' routes, nexthops (and over VXLAN neighbours, FDB) as the check expects
        }
    }

    @Test
    void dualStackOverVxlan() throws Exception {
        dualStack("vxlan", 1430, "flannel-v6.1"); // 1500 - 70: the IPv6 underlay's encapsulation
    }

    @Test
    void dualStackOverHostGw() throws Exception {
        dualStack("host-gw", 1500, null);
    }

    @Test
    void ipv6Only() throws Exception {
        ipv6Only(2, i -> List.of("--iface", "eth0"), false);
    }

    /**
     * IPv6 only, the underlay found as flanneld finds it from IPv6 facts: host 1 by the IPv6
     * default route (no --iface at all; the IPv4 main table has no default route), host 2 by
     * {@code --iface-regex} on its IPv6 address, host 3 by {@code --iface-can-reach} an IPv6 address.
     */
    @Test
    void ipv6OnlyUnderlayFoundFromIpv6Facts() throws Exception {
        ipv6Only(3, i -> switch (i) {
            case 1 -> List.of();
            case 2 -> List.of("--iface-regex", "^fd77::12$");
            default -> List.of("--iface-can-reach", UNDERLAY_GW6);
        }, true);
    }

    /** An IPv6-only network over VXLAN across {@code hosts}: keys, leases, no IPv4 device, every pod pings every other, DF-sized. */
    private static void ipv6Only(int hosts, IntFunction<List<String>> underlay, boolean ipv6Default) throws Exception {
        try (Lab lab = new Lab()) {
            Map<Integer, String> envs = bringUp(lab, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd69:69::/56\","
                    + "\"Backend\":{\"Type\":\"vxlan\"}}", hosts, underlay, ipv6Default);
            Map<Integer, String> pods = new LinkedHashMap<>();
            for (int i = 1; i <= hosts; i++) {
                assertTrue(envs.get(i).matches("FLANNEL_IPV6_NETWORK=fd69:69::/56\nFLANNEL_IPV6_SUBNET=fd69:69:0:[0-9a-f]+::1/64\n"
                        + "FLANNEL_MTU=1430\nFLANNEL_IPMASQ=true\n"), envs.get(i));
                pods.put(i, lab.addPod6(i, subnet6(envs.get(i)), mtu(envs.get(i))));
                String key = Lease.key(lab.prefix, null, subnet6(envs.get(i)));
                assertTrue(key.contains("/subnets/0.0.0.0-0&fd69:69:"), key);
                String value = lab.etcdctl("get", "--print-value-only", key).stdout();
                assertTrue(value.contains("\"PublicIP\":\"0.0.0.0\"") && value.contains("\"PublicIPv6\":\"" + Lab.hostIp6(i) + "\""), value);
                if (ipv6Default) assertTrue(Lab.sh("ip", "-n", lab.host(i), "route", "show", "default").isBlank(), "no IPv4 default route");
                assertTrue(lab.log(i).contains("msg=\"underlay\" iface=eth0 public_ipv6=" + Lab.hostIp6(i) + "\n"), lab.log(i));
            }
            assertTrue(Lab.run(List.of("ip", "-n", lab.host(1), "link", "show", "flannel.1")).exit() != 0, "no IPv4 device");
            String device = Lab.sh("ip", "-d", "-n", lab.host(1), "link", "show", "flannel-v6.1");
            assertTrue(device.contains("local " + Lab.hostIp6(1) + " dev eth0"), device);
            for (int from = 1; from <= hosts; from++) {
                for (int to = 1; to <= hosts; to++) {
                    if (from == to) continue;
                    int f = from, t = to;
                    Lab.waitFor("pod " + f + " -> pod " + t + " (IPv6 only)\n" + lab.log(f), Duration.ofSeconds(30), () -> lab.ping(lab.pod(f), pods.get(t), -1));
                }
            }
            assertTrue(lab.ping(lab.pod(1), pods.get(2), 1430 - 48), "IPv6 DF");
        }
    }

    /** A lease as flanneld's vxlan backend writes it (dual-stack key, PublicIPv6, BackendV6Data, its casing) is programmed for both families. */
    @Test
    void flanneldsDualStackLeaseIsProgrammed() throws Exception {
        try (Lab lab = new Lab()) {
            bringUp(lab, "{\"Network\":\"10.70.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd70:70::/56\",\"Backend\":{\"Type\":\"vxlan\"}}", 1);
            String key = lab.prefix + "/subnets/10.70.99.0-24&fd70:70:0:99::-64";
            String value = "{\"PublicIP\":\"192.168.77.99\",\"PublicIPv6\":\"fd77::99\",\"BackendType\":\"vxlan\","
                    + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"9e:99:00:00:00:04\"},\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"9e:99:00:00:00:06\"}}";
            assertEquals(0, lab.etcdctl("put", key, value).exit());
            Lab.waitFor("host 1 programming flanneld's lease\n" + lab.log(1), Duration.ofSeconds(20),
                    () -> !Lab.sh("ip", "-n", lab.host(1), "-6", "route", "show", "fd70:70:0:99::/64").isBlank());
            String r6 = Lab.sh("ip", "-n", lab.host(1), "-6", "route", "show", "fd70:70:0:99::/64");
            assertTrue(r6.contains("via fd70:70:0:99:: dev flannel-v6.1") && r6.contains("onlink"), r6);
            String r4 = Lab.sh("ip", "-n", lab.host(1), "route", "show", "10.70.99.0/24");
            assertTrue(r4.contains("via 10.70.99.0 dev flannel.1"), r4);
            String fdb6 = Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel-v6.1");
            assertTrue(fdb6.contains("9e:99:00:00:00:06 dst fd77::99"), fdb6);
            String fdb4 = Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel.1");
            assertTrue(fdb4.contains("9e:99:00:00:00:04 dst 192.168.77.99"), fdb4);
            String neigh6 = Lab.sh("ip", "-n", lab.host(1), "-6", "neigh", "show", "dev", "flannel-v6.1");
            assertTrue(neigh6.contains("fd70:70:0:99:: lladdr 9e:99:00:00:00:06") && neigh6.contains("PERMANENT"), neigh6);
            // deleted: both families' entries go
            assertEquals(0, lab.etcdctl("del", key).exit());
            Lab.waitFor("host 1 removing flanneld's lease", Duration.ofSeconds(20),
                    () -> Lab.sh("ip", "-n", lab.host(1), "-6", "route", "show", "fd70:70:0:99::/64").isBlank()
                            && Lab.sh("ip", "-n", lab.host(1), "route", "show", "10.70.99.0/24").isBlank());
            assertTrue(!Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel-v6.1").contains("9e:99:00:00:00:06"));
            // garbage under a dual-stack key: logged with its key and skipped
            String bad = lab.prefix + "/subnets/10.70.98.0-24&fd70:70:0:98::-64";
            assertEquals(0, lab.etcdctl("put", bad, "{\"PublicIP\":\"192.168.77.98\",\"BackendType\":\"vxlan\",\"BackendData\":{\"VtepMAC\":\"9e:98:00:00:00:04\"}}").exit());
            Lab.waitFor("the malformed lease logged", Duration.ofSeconds(20), () -> lab.log(1).contains("key=" + bad));
        }
    }
}
