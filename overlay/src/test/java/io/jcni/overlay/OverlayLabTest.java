package io.jcni.overlay;

import io.jcni.plugins.meta.flannel.SubnetFile;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Several hosts (netns) on one underlay, a real etcd, one jcnid --overlay per host: pods on
 * different hosts reach each other over VXLAN and over host-gw; the lease lifecycle (expiry after
 * kill -9, same subnet after restart, release on clean stop) is reflected on every other host.
 * 5 hosts by default (about 10 s); {@code -Djcni.lab.hosts=N} for another count.
 */
@Tag("root")
class OverlayLabTest {
    private static final int HOSTS = Integer.getInteger("jcni.lab.hosts", 5);

    @Test
    void vxlan() throws Exception {
        try (Lab lab = new Lab()) {
            Connected c = connected(lab, "{\"Network\":\"10.66.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}", 1450); // 1500 - VXLAN 50
            Map<Integer, SubnetFile> envs = c.envs();
            Map<Integer, String> pods = c.pods();

            // the kernel state flannel would have: device, FDB, neighbour, onlink route
            String link = Lab.sh("ip", "-d", "-n", lab.host(1), "link", "show", "flannel.1");
            assertTrue(link.contains("vxlan id 1") && link.contains("dstport 8472") && link.contains("nolearning"), link);
            String route2 = Lab.sh("ip", "-n", lab.host(1), "route", "show", envs.get(2).subnet().masked().toString());
            assertTrue(route2.contains("via " + envs.get(2).subnet().network() + " dev flannel.1") && route2.contains("onlink"), route2);
            String masq = Lab.sh(nftInHost(lab, 1).toArray(String[]::new));
            assertTrue(masq.contains("ip saddr 10.66.0.0/16 ip daddr != 224.0.0.0/4 masquerade"), "--ip-masq: " + masq);

            // kill -9 the last host's agent: its lease expires (TTL 3 s), the others drop its route and FDB entry
            int last = HOSTS;
            String lastSubnet = envs.get(last).subnet().masked().toString();
            lab.killAgent(last);
            Lab.waitFor("host 1 removing " + lastSubnet, Duration.ofSeconds(20),
                    () -> Lab.sh("ip", "-n", lab.host(1), "route", "show", lastSubnet).isBlank());
            assertFalse(Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel.1").contains("dst " + Lab.hostIp(last)));
            assertTrue(lab.etcdctl("get", Lease.key(lab.prefix, Cidr.parse(lastSubnet))).stdout().isBlank(), "lease expired");

            // restart after expiry: the same subnet (from subnet.env), reachable again
            lab.startAgent(last);
            Lab.waitFor("host 1 re-adding " + lastSubnet, Duration.ofSeconds(30),
                    () -> !Lab.sh("ip", "-n", lab.host(1), "route", "show", lastSubnet).isBlank());
            assertEquals(envs.get(last).subnet().masked(), SubnetEnv.read(lab.subnetFile(last)).subnet().masked());
            Lab.waitFor("pod 1 -> pod " + last, Duration.ofSeconds(10), () -> lab.ping(lab.pod(1), pods.get(last), -1));

            // kill -9 and restart at once (lease still alive): the agent takes its own lease over, same subnet
            lab.killAgent(2);
            lab.startAgent(2);
            Lab.waitFor("host 2 leased again", Duration.ofSeconds(30), () -> lab.log(2).split("msg=\"leased\"", -1).length == 3);
            assertEquals(envs.get(2).subnet().masked(), SubnetEnv.read(lab.subnetFile(2)).subnet().masked());
            Lab.waitFor("pod 1 -> pod 2", Duration.ofSeconds(10), () -> lab.ping(lab.pod(1), pods.get(2), -1));

            // clean stop releases the lease at once and removes the masquerade chain
            assertEquals(0, Lab.run(nftInHost(lab, 2)).exit());
            lab.stopAgent(2);
            assertTrue(Lab.run(nftInHost(lab, 2)).exit() != 0, "overlay_masq removed on SIGTERM");
            assertTrue(lab.etcdctl("get", Lease.key(lab.prefix, envs.get(2).subnet().masked())).stdout().isBlank(), "released on SIGTERM");
            Lab.waitFor("host 1 removing host 2", Duration.ofSeconds(10),
                    () -> Lab.sh("ip", "-n", lab.host(1), "route", "show", envs.get(2).subnet().masked().toString()).isBlank());
        }
    }

    @Test
    void hostGw() throws Exception {
        try (Lab lab = new Lab()) {
            Connected c = connected(lab, "{\"Network\":\"10.67.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}", 1500); // no encapsulation
            String route = Lab.sh("ip", "-n", lab.host(1), "route", "show", c.envs().get(2).subnet().masked().toString());
            assertTrue(route.contains("via " + Lab.hostIp(2) + " dev eth0"), route);
        }
    }

    /** etcd killed: pods keep talking; etcd back: the agents recover by themselves and a new host joins everyone. */
    @Test
    void etcdRestartThenANewHostJoins() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.69.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            int n = 3;
            for (int i = 1; i <= n; i++) lab.addHost(i);
            for (int i = 1; i <= n; i++) lab.startAgent(i);
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= n; i++) envs.put(i, lab.awaitSubnetEnv(i));
            Map<Integer, String> pods = lab.addPods(envs);
            lab.assertPodsReachEachOther(pods, 1450);

            lab.killEtcd();
            Thread.sleep(4000); // longer than the lease TTL (3 s): nothing may be torn down meanwhile
            assertTrue(lab.ping(lab.pod(1), pods.get(2), -1) && lab.ping(lab.pod(3), pods.get(1), -1), "pods keep working without etcd");
            lab.startEtcd();
            Lab.waitFor("etcd back", Duration.ofSeconds(30), () -> lab.etcdctl("get", "--prefix", "--keys-only", lab.prefix + "/subnets/")
                    .stdout().lines().filter(l -> !l.isBlank()).count() == n);

            lab.addHost(n + 1);
            lab.startAgent(n + 1);
            envs.put(n + 1, lab.awaitSubnetEnv(n + 1));
            pods.put(n + 1, lab.addPod(n + 1, envs.get(n + 1)));
            for (int i = 1; i <= n; i++) {
                int from = i;
                Lab.waitFor("pod " + i + " -> new pod\n" + lab.log(i), Duration.ofSeconds(30), () -> lab.ping(lab.pod(from), pods.get(n + 1), -1));
                assertTrue(lab.ping(lab.pod(n + 1), pods.get(i), -1), "new pod -> pod " + i);
            }
            for (int i = 1; i <= n; i++) {
                assertEquals(envs.get(i).subnet().masked(), SubnetEnv.read(lab.subnetFile(i)).subnet().masked(), "host " + i + " kept its subnet");
            }
        }
    }

    /** etcd down when the agents start: they wait (no subnet.env), and lease as soon as it is up. */
    @Test
    void etcdDownAtStart() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.75.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            lab.killEtcd();
            for (int i = 1; i <= 2; i++) lab.addHost(i);
            for (int i = 1; i <= 2; i++) lab.startAgent(i);
            Lab.waitFor("host 1 retrying", Duration.ofSeconds(60), () -> lab.log(1).contains("failed; retrying with back-off"));
            assertFalse(java.nio.file.Files.exists(lab.subnetFile(1)), "no subnet without etcd");
            lab.startEtcd();
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= 2; i++) envs.put(i, lab.awaitSubnetEnv(i));
            lab.assertPodsReachEachOther(lab.addPods(envs), 1450);
        }
    }

    /**
     * A full network (3 leasable subnets, 3 hosts): a 4th host waits; when host 3 dies its lease
     * expires, host 4 leases that subnet, and host 1's route for it moves to host 4 (host-gw).
     */
    @Test
    void fullNetworkSubnetLeasedAgainAfterExpiry() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.70.0.0/22\",\"SubnetLen\":24,\"Backend\":{\"Type\":\"host-gw\"}}");
            for (int i = 1; i <= 4; i++) lab.addHost(i);
            for (int i = 1; i <= 3; i++) lab.startAgent(i);
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= 3; i++) envs.put(i, lab.awaitSubnetEnv(i));
            lab.startAgent(4);
            Lab.waitFor("host 4 finding the network full", Duration.ofSeconds(30), () -> lab.log(4).contains("no free subnet left"));
            assertFalse(java.nio.file.Files.exists(lab.subnetFile(4)));
            String freed = envs.get(3).subnet().masked().toString();
            lab.killAgent(3);
            SubnetFile four = lab.awaitSubnetEnv(4);
            assertEquals(freed, four.subnet().masked().toString(), "the expired subnet is leased again");
            Lab.waitFor("host 1 routing " + freed + " to host 4", Duration.ofSeconds(20),
                    () -> Lab.sh("ip", "-n", lab.host(1), "route", "show", freed).contains("via " + Lab.hostIp(4) + " "));
        }
    }

    /** The flannel plugin started before the agent: ADD waits for subnet.env, then pods on two hosts talk. */
    @Test
    void flannelPluginBeforeTheAgent() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.68.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= 2; i++) {
                lab.addHost(i);
                lab.netns(lab.pod(i));
            }
            var early = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()
                    .submit(() -> lab.flannel(1, "ADD", lab.pod(1), lab.flannelConf(1, 60)));
            Thread.sleep(500);
            assertFalse(early.isDone(), "ADD waits for subnet.env");
            lab.startAgent(1);
            lab.startAgent(2);
            var r1 = early.get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(0, r1.exitCode(), r1.stdout());
            var r2 = lab.flannel(2, "ADD", lab.pod(2), lab.flannelConf(2, 60));
            assertEquals(0, r2.exitCode(), r2.stdout());
            SubnetFile env1 = SubnetEnv.read(lab.subnetFile(1)), env2 = SubnetEnv.read(lab.subnetFile(2));
            String ip1 = env1.subnet().network().next().next().toString(), ip2 = env2.subnet().network().next().next().toString();
            assertTrue(r1.stdout().contains(ip1 + "/" + env1.subnet().prefix()), r1.stdout());
            String podLink = Lab.sh("ip", "-n", lab.pod(1), "link", "show", "eth0");
            assertTrue(podLink.contains("mtu 1450"), "the delegate got FLANNEL_MTU: " + podLink);
            Lab.waitFor("pod 1 -> pod 2", Duration.ofSeconds(20), () -> lab.ping(lab.pod(1), ip2, -1));
            assertTrue(lab.ping(lab.pod(2), ip1, 1422), "full-size with DF");
            String prev = lab.flannelConf(1, 60);
            prev = prev.substring(0, prev.length() - 1) + ",\"prevResult\":" + r1.stdout() + "}";
            assertEquals(0, lab.flannel(1, "CHECK", lab.pod(1), prev).exitCode());
            assertEquals(0, lab.flannel(1, "DEL", lab.pod(1), lab.flannelConf(1, 60)).exitCode());
            assertEquals(0, lab.flannel(1, "DEL", lab.pod(1), lab.flannelConf(1, 60)).exitCode(), "DEL twice");
            assertFalse(Lab.sh("ip", "-n", lab.pod(1), "link").contains("eth0"), "pod interface gone");
        }
    }

    /** The hosts' subnet files and their pods' addresses, by host number. */
    private record Connected(Map<Integer, SubnetFile> envs, Map<Integer, String> pods) {}

    /** etcd with {@code config}, every host's agent, a pod per host, and every pod reaching every other at {@code podMtu}. */
    private static Connected connected(Lab lab, String config, int podMtu) throws Exception {
        lab.start(config);
        Map<Integer, SubnetFile> envs = bringUp(lab);
        Map<Integer, String> pods = lab.addPods(envs);
        assertEquals(podMtu, envs.get(1).mtu(), "FLANNEL_MTU");
        lab.assertPodsReachEachOther(pods, podMtu);
        return new Connected(envs, pods);
    }

    private static java.util.List<String> nftInHost(Lab lab, int i) {
        return java.util.List.of("nsenter", "--net=/var/run/netns/" + lab.host(i), "nft", "list", "chain", "inet", "jcni", OverlayMasq.CHAIN);
    }

    private static Map<Integer, SubnetFile> bringUp(Lab lab) throws Exception {
        System.out.println("lab " + lab.sfx + ": " + HOSTS + " hosts");
        for (int i = 1; i <= HOSTS; i++) lab.addHost(i);
        for (int i = 1; i <= HOSTS; i++) lab.startAgent(i);
        Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
        Set<Cidr> distinct = new HashSet<>();
        for (int i = 1; i <= HOSTS; i++) {
            SubnetFile e = lab.awaitSubnetEnv(i);
            envs.put(i, e);
            distinct.add(e.subnet().masked());
            assertTrue(e.ipMasq());
        }
        assertEquals(HOSTS, distinct.size(), "every host its own subnet");
        return envs;
    }
}
