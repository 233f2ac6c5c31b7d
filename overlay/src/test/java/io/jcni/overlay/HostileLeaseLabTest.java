package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.meta.flannel.SubnetFile;
import io.jcni.types.Cidr;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Any host can write under {@code <prefix>/subnets/}: the red team's leases, written into a
 * running lab (netns hosts, a real etcd, one jcnid --overlay per host), change no host's routes,
 * neighbours or FDB, and pods keep reaching each other. Also: a route jcni did not install is
 * never overwritten, and a keep-alive whose answer trickles (or etcd frozen) fails and the lease
 * is taken again once etcd answers.
 */
@Tag("root")
class HostileLeaseLabTest {
    private static final String ATTACKER = "192.168.77.66"; // on the underlay's subnet, no host has it

    @Test
    void hostileLeasesChangeNothingOnVxlan() throws Exception {
        try (Lab lab = new Lab()) {
            int n = 3;
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            Map<Integer, String> pods = talking(lab, "{\"Network\":\"10.71.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}", n, envs);
            Map<Integer, List<String>> before = states(lab, n, true);

            Cidr own1 = envs.get(1).subnet().masked(), own2 = envs.get(2).subnet().masked();
            String mac3 = vtepMac(lab, envs.get(3).subnet().masked());
            Map<String, String> hostile = new LinkedHashMap<>();
            hostile.put(key(lab, half(own1) + "-" + (own1.prefix() + 1)), vxlan(ATTACKER, "0a:66:00:00:00:01")); // half of host 1's pods
            hostile.put(key(lab, "192.168.77.0-24"), vxlan(ATTACKER, "0a:66:00:00:00:02")); // the underlay
            hostile.put(key(lab, net(own2) + "-024"), vxlan(ATTACKER, "0a:66:00:00:00:03")); // host 2's subnet, newer
            hostile.put(key(lab, "10.71.200.0-24"), vxlan("10.71.5.5", "0a:66:00:00:00:04")); // PublicIP in the overlay
            hostile.put(key(lab, "10.71.201.0-24"), vxlan("239.1.1.1", "0a:66:00:00:00:05")); // multicast
            hostile.put(key(lab, "10.71.202.0-24"), vxlan("127.0.0.1", "0a:66:00:00:00:06")); // loopback
            hostile.put(key(lab, "10.71.203.0-24"), vxlan(ATTACKER, mac3)); // host 3's VTEP MAC, to steal its FDB entry
            hostile.put(key(lab, "10.71.204.0-24"), "{not json"); // garbage
            hostile.put(key(lab, "10.71.205.0-24"), vxlan(ATTACKER, "zz:zz")); // bad VtepMAC
            hostile.put(key(lab, "10.71.206.0-24"), "{\"PublicIP\":\"" + ATTACKER + "\",\"BackendType\":\"host-gw\"}"); // another backend
            for (var e : hostile.entrySet()) assertEquals(0, lab.etcdctl("put", e.getKey(), e.getValue()).exit(), e.getKey());
            awaitEachRejected(lab, n, hostile.keySet());
            assertEquals(before, states(lab, n, true), "routes, neighbours and FDB unchanged on every host");
            allPodsReachEachOther(lab, pods);

            // a re-list (etcd restarted) judges them again without logging them again, and changes nothing
            Map<Integer, Integer> relists = new LinkedHashMap<>();
            for (int i = 1; i <= n; i++) relists.put(i, count(lab.log(i), "msg=\"watching again\""));
            lab.killEtcd();
            lab.startEtcd();
            for (int i = 1; i <= n; i++) {
                int h = i;
                Lab.waitFor("host " + i + " re-listing\n" + lab.log(i), Duration.ofSeconds(60),
                        () -> count(lab.log(h), "msg=\"watching again\"") > relists.get(h));
            }
            for (int i = 1; i <= n; i++) {
                for (String k : hostile.keySet()) assertEquals(1, count(lab.log(i), "key=" + k + " "), "host " + i + " logged " + k + " once");
            }
            Lab.waitFor("every host's lease back", Duration.ofSeconds(30), () -> lab.etcdctl("get", "--prefix", "--keys-only", lab.prefix + "/subnets/")
                    .stdout().lines().filter(l -> !l.isBlank()).count() == n + hostile.size());
            assertEquals(before, states(lab, n, true), "unchanged after the re-list");
            allPodsReachEachOther(lab, pods);

            // a lease carrying host 1's own PublicIP: host 1 ignores it (the others take it for host 1's)
            String mine = key(lab, "10.71.207.0-24");
            assertEquals(0, lab.etcdctl("put", mine, vxlan(Lab.hostIp(1), "0a:66:00:00:00:07")).exit());
            Lab.waitFor("host 1 ignoring " + mine, Duration.ofSeconds(20), () -> lab.log(1).contains("key=" + mine + " reason=\"PublicIP " + Lab.hostIp(1) + " is this host's"));
            Lab.waitFor("host 2 adding 10.71.207.0/24", Duration.ofSeconds(20), () -> !Lab.sh("ip", "-n", lab.host(2), "route", "show", "10.71.207.0/24").isBlank());
            assertEquals(before.get(1), state(lab, 1, true));

            // the older claim goes (host 2 stops cleanly): the newer one on the same subnet is accepted
            lab.stopAgent(2);
            Lab.waitFor("host 1 routing " + own2 + " to the newer lease", Duration.ofSeconds(20),
                    () -> Lab.sh("bridge", "-n", lab.host(1), "fdb", "show", "dev", "flannel.1").contains("0a:66:00:00:00:03 dst " + ATTACKER));
            assertTrue(Lab.sh("ip", "-n", lab.host(1), "route", "show", own2.toString()).contains("dev flannel.1"));
        }
    }

    @Test
    void hostileLeasesChangeNothingOnHostGwAndForeignRoutesStay() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.72.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}");
            int n = 2;
            for (int i = 1; i <= n; i++) {
                lab.addHost(i);
                Lab.sh("ip", "-n", lab.host(i), "route", "add", "default", "via", Lab.ETCD_IP); // what 0.0.0.0-0 would replace
            }
            for (int i = 1; i <= n; i++) lab.startAgent(i);
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= n; i++) envs.put(i, lab.awaitSubnetEnv(i));
            Map<Integer, String> pods = pods(lab, envs);
            allPodsReachEachOther(lab, pods);
            Map<Integer, List<String>> before = states(lab, n, false);

            Cidr own1 = envs.get(1).subnet().masked();
            Map<String, String> hostile = new LinkedHashMap<>();
            hostile.put(key(lab, "0.0.0.0-0"), hostGw(ATTACKER)); // every host's default route
            hostile.put(key(lab, "192.168.77.0-24"), hostGw(ATTACKER)); // the underlay's connected route
            hostile.put(key(lab, half(own1) + "-" + (own1.prefix() + 1)), hostGw(ATTACKER)); // half of host 1's pods
            hostile.put(key(lab, "10.72.200.0-24"), hostGw("224.0.0.5"));
            hostile.put(key(lab, "10.72.201.0-24"), hostGw("10.72.1.1"));
            for (var e : hostile.entrySet()) assertEquals(0, lab.etcdctl("put", e.getKey(), e.getValue()).exit(), e.getKey());
            awaitEachRejected(lab, n, hostile.keySet());
            assertEquals(before, states(lab, n, false), "routes unchanged on every host (the default route too)");
            allPodsReachEachOther(lab, pods);

            // an operator's route to a subnet that then gets a valid lease: host 1 keeps its route
            Lab.sh("ip", "-n", lab.host(1), "route", "add", "10.72.150.0/24", "via", Lab.ETCD_IP);
            String valid = key(lab, "10.72.150.0-24");
            assertEquals(0, lab.etcdctl("put", valid, hostGw(ATTACKER)).exit());
            Lab.waitFor("host 2 routing 10.72.150.0/24", Duration.ofSeconds(20),
                    () -> Lab.sh("ip", "-n", lab.host(2), "route", "show", "10.72.150.0/24").contains("via " + ATTACKER));
            Lab.waitFor("host 1 skipping it", Duration.ofSeconds(20), () -> lab.log(1).contains("a route jcni did not install holds its subnet\" subnet=10.72.150.0/24"));
            String operators = Lab.sh("ip", "-n", lab.host(1), "route", "show", "10.72.150.0/24");
            assertTrue(operators.contains("via " + Lab.ETCD_IP) && !operators.contains("proto 74"), operators);
            assertEquals(0, lab.etcdctl("del", valid).exit());
            Lab.waitFor("host 2 dropping 10.72.150.0/24", Duration.ofSeconds(20),
                    () -> Lab.sh("ip", "-n", lab.host(2), "route", "show", "10.72.150.0/24").isBlank());
            assertEquals(operators, Lab.sh("ip", "-n", lab.host(1), "route", "show", "10.72.150.0/24"), "the operator's route stays");
        }
    }

    /**
     * Host 1 talks to etcd through a proxy that then hangs: it keeps each request from etcd and
     * answers it with headers and a body that trickles and stops. Each read returns within its
     * timeout, but the etcd client's whole-answer deadline (twice the timeout) fails the keep-alive
     * call itself, well before the agent's watchdog deadline would (so the watchdog never has to
     * step in). The keep-alive retries, etcd hears none of it, the lease expires meanwhile
     * (host 2 drops host 1's route), and once etcd answers again host 1 leases the same subnet and
     * keeps it. Then etcd is frozen (SIGSTOP) past the lease TTL and thawed: every host has its
     * lease back, same subnets, pods talk.
     */
    @Test
    void stalledKeepAliveIsDetectedAndTheLeaseTakenAgain() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.73.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= 2; i++) lab.addHost(i);
            try (StallingProxy proxy = new StallingProxy("/var/run/netns/" + lab.host(1), Lab.ETCD_IP, 2379)) {
                lab.startAgent(1, "--etcd-endpoints", proxy.endpoint(), "--etcd-timeout", "1");
                lab.startAgent(2);
                Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
                for (int i = 1; i <= 2; i++) envs.put(i, lab.awaitSubnetEnv(i));
                Map<Integer, String> pods = pods(lab, envs);
                allPodsReachEachOther(lab, pods);
                String subnet1 = envs.get(1).subnet().masked().toString();
                String key1 = Lease.key(lab.prefix, envs.get(1).subnet().masked());

                proxy.stall(true);
                Lab.waitFor("host 1's keep-alive failing on the trickled answer\n" + lab.log(1), Duration.ofSeconds(30),
                        () -> lab.log(1).lines().anyMatch(l -> l.contains("msg=\"lease keep-alive failed; retrying\"")
                                && l.contains("answer not whole within the timeout")));
                Lab.waitFor("host 1's lease expiring", Duration.ofSeconds(30), () -> lab.etcdctl("get", key1).stdout().isBlank());
                Lab.waitFor("host 2 dropping host 1", Duration.ofSeconds(20), () -> Lab.sh("ip", "-n", lab.host(2), "route", "show", subnet1).isBlank());
                proxy.stall(false);

                Lab.waitFor("host 1 leased again\n" + lab.log(1), Duration.ofSeconds(40), () -> count(lab.log(1), "msg=\"leased\"") >= 2);
                // Every call was bounded by the client (at most twice the 1 s timeout), inside the watchdog's 4 s deadline.
                assertFalse(lab.log(1).contains("msg=\"lease keep-alive stalled"), "no call outlived its deadline\n" + lab.log(1));
                assertEquals(subnet1, SubnetEnv.read(lab.subnetFile(1)).subnet().masked().toString(), "the same subnet");
                Lab.waitFor("host 2 routing host 1 again", Duration.ofSeconds(20), () -> !Lab.sh("ip", "-n", lab.host(2), "route", "show", subnet1).isBlank());
                Thread.sleep(7000); // over two lease TTLs: kept alive now
                assertTrue(lab.etcdctl("get", key1).stdout().contains(Lab.hostIp(1)), "host 1's lease renewed\n" + lab.log(1));
                allPodsReachEachOther(lab, pods);

                lab.freezeEtcd(true);
                Thread.sleep(6000);
                lab.freezeEtcd(false);
                for (int i = 1; i <= 2; i++) {
                    String k = Lease.key(lab.prefix, envs.get(i).subnet().masked()), ip = Lab.hostIp(i);
                    Lab.waitFor("host " + i + "'s lease after the freeze\n" + lab.log(i), Duration.ofSeconds(40),
                            () -> lab.etcdctl("get", k).stdout().contains(ip));
                    assertEquals(envs.get(i).subnet().masked(), SubnetEnv.read(lab.subnetFile(i)).subnet().masked());
                }
                allPodsReachEachOther(lab, pods);
            }
        }
    }

    /**
     * A remote whose programming failed is retried by the agent on its own, with no change of the
     * lease and no re-list: host 1's {@code flannel.1} is down (a transient refusal: the kernel
     * refuses its nexthop and route with ENETDOWN) when host 2 leases, so adding host 2 fails, and
     * keeps failing on each retry (logged once); once the device is up again host 1 adds host 2
     * within its back-off, and pods talk.
     */
    @Test
    void aRemoteWhoseAddFailedIsAddedOnItsOwnOnceTheKernelTakesIt() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.77.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= 2; i++) lab.addHost(i);
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            lab.startAgent(1);
            envs.put(1, lab.awaitSubnetEnv(1));
            Lab.sh("ip", "-n", lab.host(1), "link", "set", "flannel.1", "down");
            lab.startAgent(2);
            envs.put(2, lab.awaitSubnetEnv(2));
            String subnet2 = envs.get(2).subnet().masked().toString();
            String failed = "msg=\"adding a remote failed; retrying\" subnet=" + subnet2;
            Lab.waitFor("host 1 failing to add host 2\n" + lab.log(1), Duration.ofSeconds(30), () -> lab.log(1).contains(failed));
            Thread.sleep(3500); // retried after 1 s and 2 s more, failing the same way
            assertTrue(Lab.sh("ip", "-n", lab.host(1), "route", "show", subnet2).isBlank(), "not added while the device is down");

            Lab.sh("ip", "-n", lab.host(1), "link", "set", "flannel.1", "up");
            Lab.waitFor("host 1 adding host 2 on its own\n" + lab.log(1), Duration.ofSeconds(30),
                    () -> Lab.sh("ip", "-n", lab.host(1), "route", "show", subnet2).contains("dev flannel.1"));
            String log = lab.log(1);
            assertTrue(log.contains("msg=\"remote programmed after failing\" subnet=" + subnet2), log);
            assertEquals(1, count(log, failed), "one line for one kind of failure, not one per retry\n" + log);
            assertFalse(log.contains("msg=\"watching again\""), "no re-list did it\n" + log);
            allPodsReachEachOther(lab, pods(lab, envs));
        }
    }

    /**
     * Host 1's {@code flannel.1} goes down and up: the kernel drops every route, nexthop object and
     * neighbour through it, and nothing puts them back. Within the agent's 10 s check host 1 has
     * the other hosts' entries back (routes, neighbours, FDB exactly as before), with no change of
     * any lease and no re-list, logs each recovery, and pods talk again.
     */
    @Test
    void remotesTheKernelDroppedWithAFlappedVxlanDeviceComeBack() throws Exception {
        try (Lab lab = new Lab()) {
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            Map<Integer, String> pods = talking(lab, "{\"Network\":\"10.78.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}", 3, envs);
            List<String> before = state(lab, 1, true);

            Lab.sh("ip", "-n", lab.host(1), "link", "set", "flannel.1", "down");
            Lab.sh("ip", "-n", lab.host(1), "link", "set", "flannel.1", "up");
            Lab.waitFor("host 1's routes, neighbours and FDB back\n" + lab.log(1), Duration.ofSeconds(30), () -> state(lab, 1, true).equals(before));
            String log = lab.log(1);
            for (int other : List.of(2, 3)) {
                assertEquals(1, count(log, "msg=\"remote recovered\" subnet=" + envs.get(other).subnet().masked() + " missing=route"), log);
            }
            assertFalse(log.contains("msg=\"watching again\""), "no re-list did it\n" + log);
            assertEquals(2, count(log, "msg=\"added remote\""), "no lease changed: each remote added once at start, then recovered\n" + log);
            allPodsReachEachOther(lab, pods);
        }
    }

    /**
     * host-gw: an admin deletes host 1's route to host 2's subnet; the agent puts it back within
     * its 10 s check (host 3's route untouched). Then host 1's underlay, eth0, goes down and up:
     * every route through it is gone, and comes back the same way. Pods talk after each.
     */
    @Test
    void remotesTheKernelLostOnHostGwComeBack() throws Exception {
        try (Lab lab = new Lab()) {
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            Map<Integer, String> pods = talking(lab, "{\"Network\":\"10.79.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}", 3, envs);
            String recovered2 = "msg=\"remote recovered\" subnet=" + envs.get(2).subnet().masked() + " missing=";
            String recovered3 = "msg=\"remote recovered\" subnet=" + envs.get(3).subnet().masked() + " missing=";
            List<String> before = state(lab, 1, false);

            Lab.sh("ip", "-n", lab.host(1), "route", "del", envs.get(2).subnet().masked().toString());
            Lab.waitFor("host 1's route to host 2 back\n" + lab.log(1), Duration.ofSeconds(30), () -> state(lab, 1, false).equals(before));
            assertEquals(1, count(lab.log(1), recovered2 + "route\n"), "the route only: its nexthop stayed\n" + lab.log(1));
            assertEquals(0, count(lab.log(1), recovered3), lab.log(1));
            allPodsReachEachOther(lab, pods);

            Lab.sh("ip", "-n", lab.host(1), "link", "set", "eth0", "down");
            Lab.sh("ip", "-n", lab.host(1), "link", "set", "eth0", "up");
            Lab.waitFor("host 1 recovering both routes after the underlay's flap\n" + lab.log(1), Duration.ofSeconds(30),
                    () -> count(lab.log(1), recovered2) == 2 && count(lab.log(1), recovered3) == 1 && state(lab, 1, false).equals(before));
            assertTrue(lab.log(1).contains(recovered3 + "route,nexthop"), "the nexthop went with the link\n" + lab.log(1));
            assertFalse(lab.log(1).contains("msg=\"watching again\""), "no re-list did it\n" + lab.log(1));
            allPodsReachEachOther(lab, pods);
        }
    }

    /**
     * Host 1's etcd answers become endless (through the proxy). The agent runs in jcnid with jcnid's
     * own JVM options (a 128 MB heap and exit on OutOfMemoryError), so an answer read whole would end
     * jcnid and every service it hosts: the etcd client reads at most its bound of an answer and
     * fails the call instead. The keep-alive is not left parked: the failure is logged, jcnid stays
     * up, and when etcd answers normally again host 1 leases the same subnet.
     */
    @Test
    void endlessEtcdAnswersDoNotEndTheKeepAliveNorJcnid() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.74.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= 2; i++) lab.addHost(i);
            try (StallingProxy proxy = new StallingProxy("/var/run/netns/" + lab.host(1), Lab.ETCD_IP, 2379)) {
                lab.startAgent(1, "--etcd-endpoints", proxy.endpoint(), "--etcd-timeout", "1");
                lab.startAgent(2);
                Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
                for (int i = 1; i <= 2; i++) envs.put(i, lab.awaitSubnetEnv(i));
                Map<Integer, String> pods = pods(lab, envs);
                allPodsReachEachOther(lab, pods);
                String subnet1 = envs.get(1).subnet().masked().toString();
                String key1 = Lease.key(lab.prefix, envs.get(1).subnet().masked());

                proxy.flood(true);
                Lab.waitFor("host 1 logging the failure\n" + lab.log(1), Duration.ofSeconds(60),
                        () -> lab.log(1).contains("jcnid overlay msg=\"lease keep-alive")); // the agent's own line: failed, stalled or thread ended
                Thread.sleep(3000); // more floods answered: each one a failed call, none an OutOfMemoryError
                assertFalse(lab.log(1).contains("OutOfMemoryError"), "no OutOfMemoryError\n" + lab.log(1));
                proxy.flood(false);

                // The proxy passes each request to etcd before it floods the answer, so etcd may
                // have renewed the lease all along; or it expired and the agent leased again.
                // Either way host 1 holds its subnet once answers are normal, and keeps it.
                Lab.waitFor("host 1's lease in etcd\n" + lab.log(1), Duration.ofSeconds(60),
                        () -> lab.etcdctl("get", key1).stdout().contains(Lab.hostIp(1)));
                assertEquals(subnet1, SubnetEnv.read(lab.subnetFile(1)).subnet().masked().toString(), "the same subnet");
                Thread.sleep(7000); // over two lease TTLs: kept alive now
                assertTrue(lab.etcdctl("get", key1).stdout().contains(Lab.hostIp(1)), "host 1's lease renewed\n" + lab.log(1));
                allPodsReachEachOther(lab, pods);
            }
        }
    }

    /**
     * Thousands of idle connections to the jcnid that hosts the agent, held past two lease TTLs:
     * the lease is never lost (its key keeps its create_revision) and the subnet stays.
     */
    @Test
    void idleConnectionsFloodingJcnidDoNotCostTheLease() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.76.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            for (int i = 1; i <= 2; i++) lab.addHost(i);
            for (int i = 1; i <= 2; i++) lab.startAgent(i);
            Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
            for (int i = 1; i <= 2; i++) envs.put(i, lab.awaitSubnetEnv(i));
            Map<Integer, String> pods = pods(lab, envs);
            allPodsReachEachOther(lab, pods);
            String key1 = Lease.key(lab.prefix, envs.get(1).subnet().masked());
            String created = createRevision(lab, key1);

            List<java.nio.channels.SocketChannel> idle = new ArrayList<>();
            try {
                java.net.UnixDomainSocketAddress addr = java.net.UnixDomainSocketAddress.of(lab.socket(1));
                long end = System.nanoTime() + Duration.ofSeconds(8).toNanos();
                while (System.nanoTime() < end) {
                    // 500 more every 200 ms, up to 4,000, each left silent
                    for (int k = 0; k < 500 && idle.size() < 4000; k++) {
                        try {
                            idle.add(java.nio.channels.SocketChannel.open(addr));
                        } catch (java.io.IOException e) {
                            break; // backlog full: jcnid is behind, which is the point
                        }
                    }
                    Thread.sleep(200);
                }
                System.out.println("idle connections opened to host 1's jcnid: " + idle.size());
                assertEquals(created, createRevision(lab, key1), "host 1's lease never lost\n" + lab.log(1));
            } finally {
                for (var c : idle) c.close();
            }
            assertTrue(!lab.log(1).contains("lease expired"), lab.log(1));
            assertEquals(envs.get(1).subnet().masked(), SubnetEnv.read(lab.subnetFile(1)).subnet().masked());
            allPodsReachEachOther(lab, pods);
        }
    }

    private static String createRevision(Lab lab, String key) throws Exception {
        String json = lab.etcdctl("get", key, "-w", "json").stdout();
        var m = java.util.regex.Pattern.compile("\"create_revision\":(\\d+)").matcher(json);
        assertTrue(m.find(), "no lease at " + key + ": " + json);
        return m.group(1);
    }

    // ------------------------------------------------------------------ helpers

    private static Map<Integer, SubnetFile> bringUp(Lab lab, int n) throws Exception {
        for (int i = 1; i <= n; i++) lab.addHost(i);
        for (int i = 1; i <= n; i++) lab.startAgent(i);
        Map<Integer, SubnetFile> envs = new LinkedHashMap<>();
        for (int i = 1; i <= n; i++) envs.put(i, lab.awaitSubnetEnv(i));
        return envs;
    }

    /** The lab started on {@code networkConfig} with {@code n} hosts whose pods reach each other: their subnet files into {@code envs}, their pods returned. */
    private static Map<Integer, String> talking(Lab lab, String networkConfig, int n, Map<Integer, SubnetFile> envs) throws Exception {
        lab.start(networkConfig);
        envs.putAll(bringUp(lab, n));
        Map<Integer, String> pods = pods(lab, envs);
        allPodsReachEachOther(lab, pods);
        return pods;
    }

    private static Map<Integer, String> pods(Lab lab, Map<Integer, SubnetFile> envs) throws Exception {
        Map<Integer, String> pods = new LinkedHashMap<>();
        for (var e : envs.entrySet()) pods.put(e.getKey(), lab.addPod(e.getKey(), e.getValue()));
        return pods;
    }

    private static void allPodsReachEachOther(Lab lab, Map<Integer, String> pods) throws Exception {
        for (int a : pods.keySet()) {
            for (int b : pods.keySet()) {
                if (a == b) continue;
                String to = pods.get(b);
                Lab.waitFor("pod " + a + " -> pod " + b + "\n" + lab.log(a), Duration.ofSeconds(30), () -> lab.ping(lab.pod(a), to, -1));
            }
        }
    }

    private static void awaitEachRejected(Lab lab, int n, java.util.Collection<String> keys) throws Exception {
        for (int i = 1; i <= n; i++) {
            int h = i;
            for (String k : keys) {
                Lab.waitFor("host " + i + " ignoring " + k + "\n" + lab.log(i), Duration.ofSeconds(20),
                        () -> lab.log(h).contains("msg=\"ignoring a lease\" key=" + k + " "));
            }
        }
    }

    /** A host's overlay-relevant kernel state: main routes; with VXLAN, flannel.1's neighbours and FDB. Sorted lines. */
    private static List<String> state(Lab lab, int i, boolean vxlan) throws Exception {
        List<String> lines = new ArrayList<>(Lab.sh("ip", "-n", lab.host(i), "route", "show", "table", "main").lines().toList());
        if (vxlan) {
            Lab.sh("ip", "-n", lab.host(i), "neigh", "show", "dev", "flannel.1", "nud", "permanent").lines().forEach(l -> lines.add("neigh " + l));
            Lab.sh("bridge", "-n", lab.host(i), "fdb", "show", "dev", "flannel.1").lines().forEach(l -> lines.add("fdb " + l));
        }
        lines.sort(null);
        return lines;
    }

    private static Map<Integer, List<String>> states(Lab lab, int n, boolean vxlan) throws Exception {
        Map<Integer, List<String>> m = new LinkedHashMap<>();
        for (int i = 1; i <= n; i++) m.put(i, state(lab, i, vxlan));
        return m;
    }

    private static String vtepMac(Lab lab, Cidr subnet) throws Exception {
        String v = lab.etcdctl("get", "--print-value-only", Lease.key(lab.prefix, subnet)).stdout().trim();
        return Lease.parse(subnet, v).vtepMac();
    }

    private static String key(Lab lab, String name) {
        return lab.prefix + "/subnets/" + name;
    }

    private static String net(Cidr c) {
        return c.network().toString();
    }

    /** The upper half's network address of {@code c} (10.71.5.0/24 → 10.71.5.128). */
    private static String half(Cidr c) {
        return c.network().add(1L << (31 - c.prefix())).toString();
    }

    private static String vxlan(String publicIp, String mac) {
        return "{\"PublicIP\":\"" + publicIp + "\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\",\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}}";
    }

    private static String hostGw(String publicIp) {
        return "{\"PublicIP\":\"" + publicIp + "\",\"PublicIPv6\":null,\"BackendType\":\"host-gw\",\"BackendData\":null}";
    }

    private static int count(String text, String part) {
        return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
    }
}
