package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.meta.flannel.SubnetFile;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * flannel's net-conf.json keys on real hosts (netns), a real etcd and real jcnid agents: DirectRouting
 * under strict reverse-path filtering, keys in Go's other casings, Backend.MTU / Port 0 / GBP, the
 * underlay chosen by --iface-regex and --iface-can-reach, a refused config stopping the agent at
 * start, and a later change in etcd logged without touching anything.
 */
@Tag("root")
class FlannelConfigLabTest {

    /**
     * DirectRouting with rp_filter=1 on every host: hosts on one L2 route each other's subnets via
     * the underlay (no flannel.1 in {@code ip route get}, no FDB entry), and pods ping both ways.
     */
    @Test
    void directRoutingWithStrictReversePathFilter() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.71.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"DirectRouting\":true}}");
            for (int i = 1; i <= 3; i++) {
                lab.addHost(i);
                Lab.sh("nsenter", "--net=/var/run/netns/" + lab.host(i), "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=1",
                        "net.ipv4.conf.default.rp_filter=1", "net.ipv4.conf.eth0.rp_filter=1");
            }
            Map<Integer, SubnetFile> envs = bringUp(lab, 3);
            long started = System.nanoTime(); // every agent runs: its route check is due within 11 s
            Map<Integer, String> pods = lab.addPods(envs);
            for (int i = 1; i <= 3; i++) {
                assertEquals("1", Lab.sh("nsenter", "--net=/var/run/netns/" + lab.host(i), "sysctl", "-n", "net.ipv4.conf.all.rp_filter").strip());
            }
            lab.assertPodsReachEachOther(pods, 1450);
            for (int a = 1; a <= 3; a++) {
                for (int b = 1; b <= 3; b++) {
                    if (a == b) continue;
                    String get = Lab.sh("ip", "-n", lab.host(a), "route", "get", pods.get(b));
                    assertTrue(get.contains("via " + Lab.hostIp(b) + " dev eth0") && !get.contains("flannel"), "direct: " + get);
                }
            }
            assertFalse(Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel.1").contains("dst 192.168.77."), "no FDB entries");
            assertTrue(Lab.sh("ip", "-d", "-n", lab.host(1), "link", "show", "flannel.1").contains("vxlan id 1"), "the device exists, as flanneld's");
            lab.assertRouteCheckFoundNothingMissing(3, started); // the direct routes as the check expects them
            // a host leaving: its direct route goes with its lease
            String sub3 = envs.get(3).subnet().masked().toString();
            lab.stopAgent(3);
            Lab.waitFor("host 1 removing " + sub3, Duration.ofSeconds(20), () -> Lab.sh("ip", "-n", lab.host(1), "route", "show", sub3).isBlank());
        }
    }

    /** Keys in lower case (as Go's decoder folds them): host-gw, not a fallback to vxlan. */
    @Test
    void lowerCaseHostGw() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"network\":\"10.72.0.0/16\",\"backend\":{\"type\":\"host-gw\"}}");
            Map<Integer, SubnetFile> envs = bringUp(lab, 2);
            assertEquals(1500, envs.get(1).mtu());
            lab.assertPodsReachEachOther(lab.addPods(envs), 1500);
            String route = Lab.sh("ip", "-n", lab.host(1), "route", "show", envs.get(2).subnet().masked().toString());
            assertTrue(route.contains("via " + Lab.hostIp(2) + " dev eth0"), route);
            assertFalse(Lab.sh("ip", "-n", lab.host(1), "link").contains("flannel."), "no VXLAN device");
        }
    }

    /**
     * {@code "vni":4096} in lower case, {@code Port: 0} (the kernel's 8472), {@code MTU: 1400} (device and pods 1350) and
     * {@code GBP}; the second host finds its underlay by --iface-regex on its address, the third by --iface-can-reach.
     */
    @Test
    void vniPortMtuGbpAndTheUnderlayByRegexAndRoute() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.73.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"vni\":4096,\"Port\":0,\"MTU\":1400,\"GBP\":true}}");
            for (int i = 1; i <= 3; i++) lab.addHost(i);
            lab.startAgent(1);
            lab.startAgentOn(2, List.of("--iface-regex", "^192\\.168\\.77\\.12$"));
            lab.startAgentOn(3, List.of("--iface", "nosuch0", "--iface-can-reach", Lab.ETCD_IP));
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= 3; i++) envs.put(i, lab.awaitSubnetEnv(i));
            assertEquals(1350, envs.get(1).mtu(), "FLANNEL_MTU: Backend.MTU - 50");
            assertTrue(lab.log(3).contains("could not find valid interface matching nosuch0"), lab.log(3));
            String link = Lab.sh("ip", "-d", "-n", lab.host(1), "link", "show", "flannel.4096");
            assertTrue(link.contains("mtu 1350") && link.contains("vxlan id 4096") && link.contains("dstport 8472") && link.contains("gbp"), link);
            String lease2 = lab.etcdctl("get", Lease.key(lab.prefix, envs.get(2).subnet().masked())).stdout();
            assertTrue(lease2.contains("\"PublicIP\":\"" + Lab.hostIp(2) + "\"") && lease2.contains("\"VNI\":4096"), lease2);
            lab.assertPodsReachEachOther(lab.addPods(envs), 1350);
        }
    }

    /**
     * A config the agent cannot honour stops it at start, naming the key; a running agent logs a
     * refused or changed config in etcd and keeps its lease, routes and subnet.env.
     */
    @Test
    void refusedConfigStopsTheAgentAndLaterChangesAreOnlyLogged() throws Exception {
        try (Lab lab = new Lab()) {
            String good = "{\"Network\":\"10.74.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}";
            lab.start(good);
            Map<Integer, SubnetFile> envs = bringUp(lab, 2);
            Map<Integer, String> pods = lab.addPods(envs);
            lab.assertPodsReachEachOther(pods, 1450);
            String route = Lab.sh("ip", "-n", lab.host(1), "route", "show", envs.get(2).subnet().masked().toString());

            assertEquals(0, lab.etcdctl("put", lab.prefix + "/config", "{\"Network\":\"10.74.0.0/16\",\"Backend\":{\"Type\":\"udp\"}}").exit());
            Lab.waitFor("host 1 refusing the new config", Duration.ofSeconds(20),
                    () -> lab.log(1).contains("msg=\"network config in etcd refused; keeping the running one\"") && lab.log(1).contains("Backend.Type: udp"));
            assertEquals(0, lab.etcdctl("put", lab.prefix + "/config", "{\"Network\":\"10.74.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":9}}").exit());
            Lab.waitFor("host 2 logging the change", Duration.ofSeconds(20), () -> lab.log(2).contains("not applied while running") && lab.log(2).contains("vni=9"));
            Thread.sleep(4000); // more than the lease TTL: keep-alives and routes go on
            assertEquals(route, Lab.sh("ip", "-n", lab.host(1), "route", "show", envs.get(2).subnet().masked().toString()));
            assertTrue(lab.ping(lab.pod(1), pods.get(2), -1) && lab.ping(lab.pod(2), pods.get(1), -1));
            assertEquals(envs.get(1), SubnetEnv.read(lab.subnetFile(1)));
            assertFalse(lab.log(1).contains("msg=\"fatal\""), lab.log(1));

            // a new host starting with the refused config stops at once, naming the key, and leases nothing
            assertEquals(0, lab.etcdctl("put", lab.prefix + "/config", "{\"network\":\"10.74.0.0/16\"}").exit());
            lab.addHost(3);
            lab.startAgent(3);
            Lab.waitFor("host 3 stopping", Duration.ofSeconds(30), () -> lab.log(3).contains("msg=\"fatal\""));
            assertTrue(lab.log(3).contains("Backend is missing; flanneld would use udp, which jcni does not support"), lab.log(3));
            assertFalse(Files.exists(lab.subnetFile(3)));
            assertEquals(2, lab.etcdctl("get", "--prefix", "--keys-only", lab.prefix + "/subnets/").stdout().lines().filter(l -> !l.isBlank()).count());
        }
    }

    private static Map<Integer, SubnetFile> bringUp(Lab lab, int hosts) throws Exception {
        for (int i = 1; i <= hosts; i++) {
            if (!Lab.sh("ip", "netns", "list").contains(lab.host(i))) lab.addHost(i);
        }
        for (int i = 1; i <= hosts; i++) lab.startAgent(i);
        Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
        for (int i = 1; i <= hosts; i++) envs.put(i, lab.awaitSubnetEnv(i));
        return envs;
    }
}
