package io.jcni.testsuite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Await;
import io.jcni.testkit.Sh;
import io.jcni.types.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * A Docker network across three hosts ({@code -o jcni.cluster=NAME}) in one {@link DockerLab}: each
 * host a private dockerd 20.10 and the installed jcnid, a real etcd on the underlay. The tests run in
 * order and share the lab; the later ones kill, remove and finally destroy parts of it.
 */
@Tag("root")
@Tag("interop")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(900)
class DockerClusterTest {
    static final String SUBNET = "10.234.0.0/16", RANGE = "10.234.1.0/24", GATEWAY = "10.234.0.1";
    static DockerLab lab;
    static DockerLab.Host a, b, c;
    static String net, cluster;

    @BeforeAll
    static void setUp() throws Exception {
        lab = DockerLab.start(3);
        a = lab.hosts.get(0);
        b = lab.hosts.get(1);
        c = lab.hosts.get(2);
        net = "jc" + lab.id;
        cluster = "cl-" + lab.id;
    }

    @AfterAll
    static void tearDown() {
        if (lab == null) return;
        assertEquals(List.of(), lab.closeAndListLeftovers());
    }

    static String clusterKey(String rest) {
        return lab.prefix + "/clusters/" + cluster + "/" + rest;
    }

    /** The shared pool's taken addresses (the gateway included). */
    static Set<String> pooled() {
        String v = lab.etcdValue("clusters/" + cluster + "/pool");
        Set<String> s = new TreeSet<>();
        for (Object o : Json.asList(Json.parseObject(v).get("allocated"))) s.add((String) o);
        return s;
    }

    /** The addresses published in etcd, by endpoint. */
    static Map<String, String> published() {
        Map<String, String> m = new LinkedHashMap<>();
        List<String> lines = Sh.lines(lab.etcdctl("get", "--prefix", lab.prefix + "/clusters/" + cluster + "/endpoints/").ok().out());
        for (int i = 0; i + 1 < lines.size(); i += 2) {
            Map<String, Object> doc = Json.parseObject(lines.get(i + 1));
            m.put(lines.get(i), String.valueOf(Json.asList(doc.get("addresses")).getFirst()));
        }
        return m;
    }

    static List<String> containers(DockerLab.Host h) {
        return Sh.lines(h.docker.ok("ps", "-q", "--filter", "network=" + net)).stream().filter(l -> !l.isBlank()).toList();
    }

    static List<String> addresses(DockerLab.Host h) {
        List<String> ips = new ArrayList<>();
        for (String ct : containers(h)) ips.add(h.ip(net, ct));
        return ips;
    }

    /** Each running container's address is published once, in the pool once, and no two containers share one. */
    static void assertNoDuplicateState(List<DockerLab.Host> live) {
        List<String> all = new ArrayList<>();
        for (DockerLab.Host h : live) all.addAll(addresses(h));
        assertEquals(all.size(), new HashSet<>(all).size(), "duplicate addresses: " + all);
        Map<String, String> pub = published();
        assertEquals(new TreeSet<>(all), new TreeSet<>(pub.values()), "published: " + pub);
        assertEquals(pub.size(), new HashSet<>(pub.values()).size(), "an address published twice: " + pub);
        Set<String> expected = new TreeSet<>(all);
        expected.add(GATEWAY);
        assertEquals(expected, pooled());
    }

    @Test
    @Order(1)
    void containersOnEveryHostReachEveryOtherHostsContainers() {
        for (DockerLab.Host h : lab.hosts) h.createNetwork(net, cluster, SUBNET, GATEWAY, RANGE);
        List<String> keys = lab.etcdKeys();
        assertTrue(keys.contains(clusterKey("network")) && keys.contains(clusterKey("pool")), keys.toString());
        for (DockerLab.Host h : lab.hosts) assertTrue(keys.contains(clusterKey("hosts/" + h.underlayIp)), keys.toString());
        // VXLAN on each host's bridge, MTU = underlay (1500) - 50, no learning, proxy ARP
        for (DockerLab.Host h : lab.hosts) {
            String vx = h.docker.inHost("ip", "-d", "-o", "link", "show", "type", "vxlan").out();
            assertTrue(vx.contains("jcvx") && vx.contains("mtu 1450") && vx.contains("nolearning") && vx.contains("proxy") && vx.contains("master jc-"), vx);
        }
        Map<DockerLab.Host, String> ips = new LinkedHashMap<>();
        for (DockerLab.Host h : lab.hosts) ips.put(h, h.run(net, "c" + h.name + "1"));
        assertEquals(3, new HashSet<>(ips.values()).size(), ips.toString());
        for (String ip : ips.values()) assertTrue(ip.startsWith("10.234.1."), ip);
        assertTrue(a.docker.ok("exec", "ca1", "ip", "-o", "link", "show", "eth0").contains("mtu 1450"));
        for (DockerLab.Host from : lab.hosts) {
            for (DockerLab.Host to : lab.hosts) if (from != to) from.awaitPing("c" + from.name + "1", ips.get(to));
        }
        // A full-size packet with DF set crosses: 1450 bytes in the container (1422 of ICMP payload), 1500 on
        // the underlay; one byte more does not leave the container (so DF was set and the MTU is what counts).
        for (DockerLab.Host to : List.of(b, c)) {
            Sh.Run full = a.inContainerNetns("ca1", "ping", "-M", "do", "-c", "1", "-W", "2", "-s", "1422", ips.get(to));
            assertEquals(0, full.rc(), full.out() + full.err());
        }
        Sh.Run tooBig = a.inContainerNetns("ca1", "ping", "-M", "do", "-c", "1", "-W", "2", "-s", "1423", ips.get(b));
        assertNotEquals(0, tooBig.rc(), tooBig.out());
        // No flooding entry (00:00:00:00:00:00) on any VXLAN device: only the other hosts' containers.
        for (DockerLab.Host h : lab.hosts) {
            String dev = h.vxlanDevice(0);
            List<String> fdb = h.fdb(dev);
            assertFalse(fdb.stream().anyMatch(l -> l.startsWith("00:00:00:00:00:00")), fdb.toString());
            for (DockerLab.Host other : lab.hosts) assertEquals(other != h, h.programs(dev, other), h + " programs " + other + ": " + fdb);
        }
        assertNoDuplicateState(lab.hosts);
    }

    @Test
    @Order(2)
    void thirtyConcurrentRunsOnThreeHostsGiveNoDuplicateAddress() throws Exception {
        int each = 10;
        ConcurrentLinkedQueue<String> ips = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (DockerLab.Host h : lab.hosts) {
            for (int i = 0; i < each; i++) {
                String name = "cc" + h.name + i;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        ips.add(h.run(net, name));
                    } catch (AssertionError | RuntimeException e) {
                        errors.add(name + ": " + e.getMessage());
                    }
                }));
            }
        }
        for (Thread t : threads) t.join();
        assertEquals(List.of(), List.copyOf(errors));
        assertEquals(lab.hosts.size() * each, ips.size());
        assertEquals(ips.size(), new HashSet<>(ips).size(), "duplicate addresses: " + ips);
        assertNoDuplicateState(lab.hosts);
        // new containers of each host answer the others'
        a.awaitPing("cca0", b.ip(net, "ccb0"));
        b.awaitPing("ccb0", c.ip(net, "ccc0"));
        c.awaitPing("ccc0", a.ip(net, "cca0"));
    }

    @Test
    @Order(3)
    void anInternalClusterNetworkReachesAcrossHostsButNothingOutside() throws Exception {
        String inet = "ji" + lab.id, icluster = "ci-" + lab.id, isubnet = "10.235.0.0/24";
        for (DockerLab.Host h : lab.hosts) h.createNetwork(inet, icluster, isubnet, "10.235.0.1", null, "--internal");
        String ia = a.run(inet, "ia"), ib = b.run(inet, "ib"), ic = c.run(inet, "ic");
        a.awaitPing("ia", ib);
        b.awaitPing("ib", ic);
        c.awaitPing("ic", ia);
        for (DockerLab.Host h : lab.hosts) {
            String ct = "i" + h.name;
            assertFalse(h.docker.ok("exec", ct, "ip", "route").contains("default"), h.docker.ok("exec", ct, "ip", "route"));
            // No masquerading of the internal subnet on any host.
            assertFalse(h.docker.inHost("iptables-save", "-t", "nat").out().contains(isubnet), h.docker.inHost("iptables-save", "-t", "nat").out());
        }
        // Even given a way out (a default route through the gateway address, added from outside the
        // container), nothing leaves: not etcd's address on the underlay, not the host's own underlay address.
        a.inContainerNetns("ia", "ip", "route", "add", "default", "via", "10.235.0.1").ok();
        for (String outside : List.of(DockerLab.ETCD_IP, a.underlayIp, b.underlayIp)) {
            Sh.Run r = a.inContainerNetns("ia", "ping", "-c", "2", "-W", "1", outside);
            assertNotEquals(0, r.rc(), "reached " + outside + " from an internal network: " + r.out());
        }
        a.awaitPing("ia", ic); // and the cluster network itself still works
        for (DockerLab.Host h : lab.hosts) {
            h.docker.ok("rm", "-f", "i" + h.name);
            h.docker.ok("network", "rm", inet);
        }
        assertFalse(lab.etcdKeys().stream().anyMatch(k -> k.contains("/" + icluster + "/")), lab.etcdKeys().toString());
    }

    /** A container's IPv6 address on {@code network}. */
    static String ip6(DockerLab.Host h, String network, String container) {
        return h.docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + network + "\").GlobalIPv6Address}}", container);
    }

    /** Waits (bounded) until a container of {@code h} pings {@code ip6} with busybox's {@code ping -6}. */
    static void awaitPing6(DockerLab.Host h, String container, String ip6) {
        Sh.Run r = null;
        for (int i = 0; i < 60; i++) {
            r = h.docker.run("exec", container, "ping", "-6", "-c", "1", "-W", "2", ip6);
            if (r.rc() == 0) return;
            Await.pause(250);
        }
        throw new AssertionError("no ping -6 from " + container + " on " + h + " to " + ip6 + ": " + r.out() + r.err() + "\nneigh:\n"
                + h.docker.inHost("ip", "-6", "neigh", "show").out());
    }

    /** Every address published for the endpoints of {@code clusterName} (both families), one entry per publication. */
    static List<String> publishedAddresses(String clusterName) {
        List<String> out = new ArrayList<>();
        List<String> lines = Sh.lines(lab.etcdctl("get", "--prefix", "--print-value-only", lab.prefix + "/clusters/" + clusterName + "/endpoints/").ok().out());
        for (String l : lines) if (!l.isBlank()) for (Object a : Json.asList(Json.parseObject(l).get("addresses"))) out.add((String) a);
        return out;
    }

    @Test
    @Order(4)
    void aDualStackClusterNetworkPingsOverIPv6AcrossHostsWithoutDuplicates() throws Exception {
        String dnet = "jd" + lab.id, dcluster = "cd-" + lab.id, subnet = "10.236.0.0/16", gw = "10.236.0.1";
        // The lab's ID in the IPv6 prefix, written as Docker prints it (no leading zero in the group).
        String p6 = "fd6a:6e32:1" + lab.id.substring(1) + ":", subnet6 = p6 + ":/64", gw6 = p6 + ":1";
        String[] v6 = {"--ipv6", "--subnet", subnet6, "--gateway", gw6};
        a.createNetwork(dnet, dcluster, subnet, gw, null, v6);
        b.createNetwork(dnet, dcluster, subnet, gw, null, v6);
        // A host asking for another IPv6 subnet, or for none, is refused naming the difference; then it joins as asked.
        Sh.Run other = c.docker.run("network", "create", "-d", c.driver, "--ipam-driver", c.driver, "--subnet", subnet, "--gateway", gw, "--ipv6",
                "--subnet", "fd6a:6e33::/64", "-o", "jcni.cluster=" + dcluster, dnet);
        assertTrue(other.rc() != 0 && other.err().contains("IPv6 subnet fd6a:6e33::/64 (the cluster network has " + subnet6 + ")"), other.out() + other.err());
        Sh.Run none = c.docker.run("network", "create", "-d", c.driver, "--ipam-driver", c.driver, "--subnet", subnet, "--gateway", gw,
                "-o", "jcni.cluster=" + dcluster, dnet);
        assertTrue(none.rc() != 0 && none.err().contains("no IPv6 subnet (the cluster network has " + subnet6 + ")"), none.out() + none.err());
        c.createNetwork(dnet, dcluster, subnet, gw, null, v6);
        Map<String, Object> def = Json.parseObject(lab.etcdValue("clusters/" + dcluster + "/network"));
        assertEquals(subnet6, def.get("subnet6"));
        assertEquals(gw6, def.get("gateway6"));
        String vx = "jcvx" + def.get("vni");
        assertTrue(lab.etcdKeys().contains(lab.prefix + "/clusters/" + dcluster + "/pool6"), lab.etcdKeys().toString());

        // One container per host: each pings every other host's container's IPv6 address; the gateway is each host's own.
        Map<DockerLab.Host, String> ips6 = new LinkedHashMap<>();
        for (DockerLab.Host h : lab.hosts) {
            h.run(dnet, "d" + h.name + "1");
            ips6.put(h, ip6(h, dnet, "d" + h.name + "1"));
        }
        assertEquals(3, new HashSet<>(ips6.values()).size(), ips6.toString());
        for (String ip : ips6.values()) assertTrue(ip.startsWith(p6), ip);
        String routes6 = a.inContainerNetns("da1", "ip", "-6", "route").out();
        assertTrue(routes6.contains("default via " + gw6 + " "), routes6);
        for (DockerLab.Host from : lab.hosts) {
            for (DockerLab.Host to : lab.hosts) if (from != to) awaitPing6(from, "d" + from.name + "1", ips6.get(to));
        }
        // Every host has a permanent IPv6 neighbour entry per remote container on the VXLAN device, and no flooding FDB entry: the
        // containers learnt each other's MACs from neighbour advertisements that the device's proxy made from those entries.
        for (DockerLab.Host h : lab.hosts) {
            String neigh = h.docker.inHost("ip", "-6", "neigh", "show", "dev", vx).out();
            assertFalse(h.fdb(vx).stream().anyMatch(l -> l.startsWith("00:00:00:00:00:00")), h.fdb(vx).toString());
            for (DockerLab.Host o : lab.hosts) {
                if (o == h) continue;
                String mac = o.docker.ok("exec", "d" + o.name + "1", "cat", "/sys/class/net/eth0/address");
                assertTrue(neigh.contains(ips6.get(o) + " lladdr " + mac + " PERMANENT"), h + ": " + neigh);
                String learnt = h.inContainerNetns("d" + h.name + "1", "ip", "-6", "neigh", "show", ips6.get(o)).out();
                assertTrue(learnt.contains("lladdr " + mac), h + " container: " + learnt);
            }
        }

        // 12 concurrent runs over the 3 hosts: 0 duplicate IPv6 addresses, each published once and in the IPv6 pool once.
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (DockerLab.Host h : lab.hosts) {
            for (int i = 0; i < 4; i++) {
                String name = "dc" + h.name + i;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        h.run(dnet, name);
                    } catch (AssertionError | RuntimeException e) {
                        errors.add(name + ": " + e.getMessage());
                    }
                }));
            }
        }
        for (Thread t : threads) t.join();
        assertEquals(List.of(), List.copyOf(errors));
        List<String> all6 = new ArrayList<>();
        for (DockerLab.Host h : lab.hosts) {
            for (String ct : Sh.lines(h.docker.ok("ps", "-q", "--filter", "network=" + dnet))) if (!ct.isBlank()) all6.add(ip6(h, dnet, ct.strip()));
        }
        assertEquals(15, all6.size(), all6.toString());
        assertEquals(all6.size(), new HashSet<>(all6).size(), "duplicate IPv6 addresses: " + all6);
        List<String> pub6 = publishedAddresses(dcluster).stream().filter(x -> x.contains(":")).toList();
        assertEquals(new TreeSet<>(all6), new TreeSet<>(pub6), "published: " + pub6);
        assertEquals(pub6.size(), new HashSet<>(pub6).size(), "an IPv6 address published twice: " + pub6);
        Set<String> pool6 = new TreeSet<>();
        for (Object o : Json.asList(Json.parseObject(lab.etcdValue("clusters/" + dcluster + "/pool6")).get("allocated"))) pool6.add((String) o);
        Set<String> expected = new TreeSet<>(all6);
        expected.add(gw6);
        assertEquals(expected, pool6);
        awaitPing6(a, "dca0", ip6(c, dnet, "dcc3"));

        // A fixed --ip6 is reserved cluster-wide: another host cannot have it.
        String fixed = p6 + ":77";
        c.run(dnet, "dfix", "--ip6", fixed);
        assertEquals(fixed, ip6(c, dnet, "dfix"));
        Sh.Run taken = a.docker.run("run", "-d", "--name", "dfix2", "--network", dnet, "--ip6", fixed, DockerLab.IMAGE, "sleep", "3600");
        assertTrue(taken.rc() != 0 && taken.err().contains("already in use"), taken.out() + taken.err());
        awaitPing6(b, "db1", fixed);

        // network rm on every host: nothing of the cluster left in etcd, no VXLAN device, bridge or neighbour entry of it.
        String bridge = "jc-" + a.docker.ok("network", "inspect", "-f", "{{.Id}}", dnet).substring(0, 12);
        a.docker.run("rm", "-f", "dfix2");
        c.docker.ok("rm", "-f", "dfix");
        for (DockerLab.Host h : lab.hosts) {
            for (int i = 0; i < 4; i++) h.docker.ok("rm", "-f", "dc" + h.name + i);
            h.docker.ok("rm", "-f", "d" + h.name + "1");
            h.docker.ok("network", "rm", dnet);
        }
        assertFalse(lab.etcdKeys().stream().anyMatch(k -> k.contains("/" + dcluster + "/") || k.endsWith("/vnis/" + def.get("vni"))), lab.etcdKeys().toString());
        for (DockerLab.Host h : lab.hosts) {
            String links = h.docker.inHost("ip", "-o", "link").out();
            assertFalse(links.contains(vx) || links.contains(bridge), links);
            String neigh = h.docker.inHost("ip", "-6", "neigh", "show").out();
            assertFalse(neigh.contains(p6), neigh);
        }
    }

    @Test
    @Order(5)
    void aKilledDockerdLosesNothing() throws Exception {
        // dockerd kills and restarts its containers after a kill -9 (without live-restore): those with a restart policy
        // come back, through Leave, DeleteEndpoint, ReleaseAddress and a new endpoint each.
        List<String> names = new ArrayList<>();
        for (String ct : containers(b)) {
            b.docker.ok("update", "--restart", "always", ct);
            names.add(b.docker.ok("inspect", "-f", "{{.Name}}", ct));
        }
        Set<String> before = new TreeSet<>(addresses(b));
        Map<DockerLab.Host, List<String>> fdbBefore = new LinkedHashMap<>();
        for (DockerLab.Host h : List.of(a, c)) fdbBefore.put(h, h.fdb(h.vxlanDevice(0)));
        b.docker.killAndRestart();
        Await.until("host b's containers run again", Duration.ofMinutes(3), () -> containers(b).size() == names.size());
        // Docker keeps no container's address across its restart (libnetwork allocates again; two restarting containers
        // may swap), but the host's addresses are the same ones: nothing else took them, nothing leaked.
        assertEquals(before, new TreeSet<>(addresses(b)));
        for (DockerLab.Host h : List.of(a, c)) {
            Await.until(h + " programs host b's containers as before", Duration.ofSeconds(40), () -> h.fdb(h.vxlanDevice(0)).equals(fdbBefore.get(h)));
        }
        a.awaitPing("ca1", b.ip(net, "cb1"));
        b.awaitPing("cb1", c.ip(net, "cc1"));
        assertNoDuplicateState(lab.hosts);
    }

    @Test
    @Order(6)
    void aKilledJcnidLosesNothingAndItsEntriesComeBackTheSame() throws Exception {
        String ipA = a.ip(net, "ca1");
        Map<DockerLab.Host, List<String>> fdbBefore = new LinkedHashMap<>();
        for (DockerLab.Host h : List.of(b, c)) fdbBefore.put(h, h.fdb(h.vxlanDevice(0)));
        List<String> addressesBefore = addresses(a);
        a.killJcnid(); // kill -9: the kernel's dataplane stays
        b.awaitPing("cb1", ipA);
        // The lease is not renewed any more: after its TTL the other hosts drop host a's containers...
        for (DockerLab.Host h : List.of(b, c)) Await.until(h + " drops host a's entries after the lease TTL", Duration.ofSeconds(40), () -> !h.programs(h.vxlanDevice(0), a));
        assertNotEquals(0, b.ping("cb1", ipA).rc(), "host a still reachable without its entries");
        // ...and host a, restarted, publishes them again: the same entries, the same addresses.
        a.startJcnid();
        for (DockerLab.Host h : List.of(b, c)) {
            Await.until(h + " programs host a's containers again", Duration.ofSeconds(40), () -> h.fdb(h.vxlanDevice(0)).equals(fdbBefore.get(h)));
        }
        assertEquals(addressesBefore, addresses(a));
        b.awaitPing("cb1", ipA);
        a.awaitPing("ca1", c.ip(net, "cc1"));
        assertNoDuplicateState(lab.hosts);
    }

    @Test
    @Order(7)
    void withEtcdUnreachableRunningContainersKeepWorkingAndNewOnesFailClearly() throws Exception {
        String ipA = a.ip(net, "ca1");
        lab.pauseEtcd(true);
        try {
            Sh.Run r = b.docker.run("run", "--rm", "--network", net, DockerLab.IMAGE, "true");
            assertTrue(r.rc() != 0 && r.err().contains("etcd http://" + DockerLab.ETCD_IP + ":2379 unreachable"), r.out() + r.err());
            b.awaitPing("cb1", ipA);
        } finally {
            lab.pauseEtcd(false);
        }
        b.docker.ok("run", "--rm", "--network", net, DockerLab.IMAGE, "true");
        Await.until("host b programs host a's containers", Duration.ofSeconds(40), () -> b.programs(b.vxlanDevice(0), a));
        b.awaitPing("cb1", ipA);
    }

    @Test
    @Order(8)
    void removingTheNetworkOnOneHostLeavesTheOthersWorking() throws Exception {
        List<String> ofA = addresses(a);
        for (String ct : Sh.lines(a.docker.ok("ps", "-aq"))) a.docker.ok("rm", "-f", ct);
        a.docker.ok("network", "rm", net);
        assertEquals("", a.docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out().strip());
        List<String> keys = lab.etcdKeys();
        assertTrue(keys.contains(clusterKey("network")), keys.toString());
        assertFalse(keys.contains(clusterKey("hosts/" + a.underlayIp)), keys.toString());
        for (String ip : ofA) assertFalse(pooled().contains(ip), ip + " still taken");
        b.awaitPing("cb1", c.ip(net, "cc1"));
        c.awaitPing("cc1", b.ip(net, "cb1"));
        for (DockerLab.Host h : List.of(b, c)) Await.until(h + " drops host a's entries", Duration.ofSeconds(20), () -> !h.programs(h.vxlanDevice(0), a));
        assertNoDuplicateState(List.of(b, c));
    }

    @Test
    @Order(9)
    void aDeadHostsEntriesGoAfterTheLeaseAndItsAddressesAfterTheGrace() throws Exception {
        List<String> ofC = addresses(c);
        assertEquals(11, ofC.size(), ofC.toString());
        c.die(); // its jcnid, dockerd and containers killed, its namespace gone: nobody withdraws anything
        Await.until("host b drops host c's entries after the lease TTL", Duration.ofSeconds(40), () -> !b.programs(b.vxlanDevice(0), c));
        assertFalse(lab.etcdKeys().contains(clusterKey("hosts/" + c.underlayIp)));
        // The addresses stay taken for the grace period after the host's lease went, then they are free.
        Await.until("host c's addresses free after the grace period", Duration.ofMinutes(1), () -> {
            Set<String> p = pooled();
            return ofC.stream().noneMatch(p::contains);
        });
        // New containers can have them: one asked for by address, and the lowest free one automatically.
        assertEquals(ofC.getFirst(), b.run(net, "cb-reuse", "--ip", ofC.getFirst()));
        b.run(net, "cb-auto");
        b.awaitPing("cb-reuse", b.ip(net, "cb1"));
        assertNoDuplicateState(List.of(b));
    }

    @Test
    @Order(10)
    void theLastHostsRemovalLeavesNothingBehind() {
        for (String ct : Sh.lines(b.docker.ok("ps", "-aq"))) b.docker.ok("rm", "-f", ct);
        b.docker.ok("network", "rm", net);
        assertEquals(List.of(), lab.etcdKeys());
        for (DockerLab.Host h : List.of(a, b)) {
            assertEquals("", h.docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out().strip());
            String links = h.docker.inHost("ip", "-o", "link").out();
            assertFalse(links.contains("jc-") || links.contains("jcv"), links);
        }
    }
}
