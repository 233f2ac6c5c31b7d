package io.jcni.docker.api;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.network.Attacher.HostLink;
import io.jcni.docker.network.Attacher.HostRoute;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.network.FakeAttacher;
import io.jcni.docker.store.MemoryStore;
import io.jcni.types.Cidr;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the driver refuses so that it never destroys what it did not create: non-bridge and shared
 * bridge names, overlapping subnets (other networks and the host's routes), host ports taken by
 * another container; checked atomically under concurrent calls.
 */
@Timeout(60)
class OwnershipAndConflictsTest {
    MemoryStore store;
    FakeAttacher attacher;
    CniNetworkDriver network;
    RemoteApi api;

    @BeforeEach
    void setUp() {
        store = new MemoryStore();
        attacher = new FakeAttacher();
        network = new CniNetworkDriver(store, attacher, name -> null, "local", null);
        api = new RemoteApi(network, new JcniIpam(store), null);
    }

    static String id(char c) {
        return String.valueOf(c).repeat(64);
    }

    static String id(int i) {
        return String.format("%03x", i) + "d".repeat(61); // distinct in the 12 characters bridge names take
    }

    /** The error of a NetworkDriver call, or null when it succeeded. */
    String err(String path, String body) {
        RemoteApi.Reply r = api.handle("POST", path, body.getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.status(), r.json());
        return (String) Json.parseObject(r.json()).get("Err");
    }

    String create(String net, String subnet, String gateway, String bridge) {
        String generic = bridge == null ? "{}" : "{\"com.docker.network.bridge.name\":\"" + bridge + "\"}";
        return err("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + net + "\",\"Options\":{\"com.docker.network.generic\":" + generic
                + "},\"IPv4Data\":[{\"AddressSpace\":\"\",\"Pool\":\"" + subnet + "\",\"Gateway\":\"" + gateway + "\"}],\"IPv6Data\":[]}");
    }

    void joinedEndpoint(String net, String ep, String address) {
        assertNull(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + net + "\",\"EndpointID\":\"" + ep + "\",\"Interface\":{\"Address\":\""
                + address + "\"}}"));
        assertNull(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + net + "\",\"EndpointID\":\"" + ep + "\",\"SandboxKey\":\"/run/x/" + ep.substring(0, 8) + "\"}"));
    }

    String publish(String net, String ep, String bindings) {
        return err("/NetworkDriver.ProgramExternalConnectivity", "{\"NetworkID\":\"" + net + "\",\"EndpointID\":\"" + ep
                + "\",\"Options\":{\"com.docker.network.portmap\":[" + bindings + "]}}");
    }

    static String tcp(String hostIp, int hostPort) {
        return "{\"Proto\":6,\"Port\":80,\"HostIP\":\"" + hostIp + "\",\"HostPort\":" + hostPort + "}";
    }

    // ------------------------------------------------------------ bridges

    @Test
    void aHostInterfaceThatIsNotABridgeIsRefused() {
        attacher.links.put("eth0", new HostLink("eth0", "", List.of(Cidr.parse("192.168.1.5/24"))));
        attacher.links.put("veth9", new HostLink("veth9", "veth", List.of()));
        for (String name : List.of("eth0", "veth9")) {
            String e = create(id('a'), "10.0.0.0/24", "10.0.0.1/24", name);
            assertNotNull(e);
            assertTrue(e.contains("existing interface " + name + " is not a bridge"), e);
        }
        assertTrue(network.networks().isEmpty());
        assertEquals(List.of(), attacher.calls, "nothing was opened, nothing can be removed");
    }

    @Test
    void aBridgeThatExistedIsUsedAndLeftInPlaceWithoutWhatJcniAddedToIt() {
        attacher.links.put("br-user", new HostLink("br-user", "bridge", List.of(Cidr.parse("192.168.9.1/24"))));
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", "br-user"));
        assertFalse(network.networks().get(id('a')).ownsBridge());
        assertEquals(false, store.get("networks", id('a')).orElseThrow().get("ownsBridge"), "ownership is recorded");
        assertNull(err("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + id('a') + "\"}"));
        assertEquals("remove docker-aaaaaaaaaaaa br-user masquerade [10.0.0.0/24] drop-addresses [10.0.0.1/24]", attacher.calls.getLast(),
                "not deleted; only the gateway address jcni put on it goes");
    }

    @Test
    void aBridgeThatExistedWithTheGatewayOnItKeepsIt() {
        attacher.links.put("br-user", new HostLink("br-user", "bridge", List.of(Cidr.parse("10.0.0.1/24"))));
        attacher.routes.add(new HostRoute(Cidr.parse("10.0.0.0/24"), "br-user")); // the route of its own address
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", "br-user"));
        assertNull(err("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + id('a') + "\"}"));
        assertEquals("remove docker-aaaaaaaaaaaa br-user masquerade [10.0.0.0/24]", attacher.calls.getLast());
    }

    @Test
    void aBridgeJcniMadeGoesWithTheNetwork() {
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", "br-new"));
        assertTrue(network.networks().get(id('a')).ownsBridge());
        assertNull(err("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + id('a') + "\"}"));
        assertEquals("remove docker-aaaaaaaaaaaa br-new masquerade [10.0.0.0/24] delete-bridge", attacher.calls.getLast());
    }

    @Test
    void stateWrittenBeforeOwnershipWasRecordedOwnsOnlyDefaultNamedBridges() {
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", null));
        assertNull(create(id('b'), "10.1.0.0/24", "10.1.0.1/24", "br-old"));
        for (String n : List.of(id('a'), id('b'))) {
            Map<String, Object> doc = store.get("networks", n).orElseThrow();
            doc.remove("ownsBridge");
            store.put("networks", n, doc);
        }
        CniNetworkDriver restarted = new CniNetworkDriver(store, attacher, name -> null, "local", null);
        assertTrue(restarted.networks().get(id('a')).ownsBridge(), "jc-<id> is a name only jcni chooses");
        assertFalse(restarted.networks().get(id('b')).ownsBridge(), "a chosen name may have been the user's bridge");
    }

    // ------------------------------------------------------------ subnets

    @Test
    void overlappingSubnetsAreRefusedWithDockersWording() {
        assertNull(create(id('a'), "10.0.0.0/16", "10.0.0.1/16", null));
        for (String s : List.of("10.0.0.0/16", "10.0.5.0/24", "10.0.0.0/8")) {
            String e = create(id('b'), s, Cidr.parse(s).network().next() + "/" + Cidr.parse(s).prefix(), null);
            assertNotNull(e, s);
            assertTrue(e.contains("Pool overlaps with other one on this address space") && e.contains(id('a')), e);
        }
        assertNull(create(id('b'), "10.1.0.0/16", "10.1.0.1/16", null));
        assertNull(err("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + id('a') + "\"}"));
        assertNull(create(id('c'), "10.0.5.0/24", "10.0.5.1/24", null), "free again once the network is gone");
    }

    @Test
    void subnetsOverlappingTheHostsRoutesAreRefusedButNotForTheDefaultRoute() {
        attacher.routes.add(new HostRoute(Cidr.parse("0.0.0.0/0"), "eth0"));
        attacher.routes.add(new HostRoute(Cidr.parse("192.168.0.0/16"), "eth0"));
        attacher.routes.add(new HostRoute(Cidr.parse("fd00::/8"), "eth0"));
        String e = create(id('a'), "192.168.50.0/24", "192.168.50.1/24", null);
        assertNotNull(e);
        assertTrue(e.contains("Pool overlaps with other one on this address space") && e.contains("192.168.0.0/16 dev eth0"), e);
        assertNull(create(id('a'), "10.9.0.0/24", "10.9.0.1/24", null));
    }

    // ------------------------------------------------------------ concurrency

    /** Runs n calls at once (released together) and returns their errors, null for success. */
    List<String> atOnce(int n, IntFunction<String> call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                fs.add(pool.submit(() -> {
                    go.await();
                    return call.apply(k);
                }));
            }
            go.countDown();
            List<String> out = new ArrayList<>();
            for (Future<String> f : fs) out.add(f.get(30, TimeUnit.SECONDS));
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void eightConcurrentCreatesWithOneBridgeNameMakeOneNetwork() throws Exception {
        attacher.slowMillis = 20; // iptables takes at least that long on a real host: every create is inside the window
        List<String> errs = atOnce(8, i -> create(id(i), "10." + (40 + i) + ".0.0/24", "10." + (40 + i) + ".0.1/24", "br-shared"));
        assertEquals(1, errs.stream().filter(java.util.Objects::isNull).count(), errs.toString());
        errs.stream().filter(java.util.Objects::nonNull).forEach(e -> assertTrue(e.contains("networks have same bridge name"), e));
        assertEquals(1, network.networks().size());
        assertEquals(1, attacher.calls.stream().filter(c -> c.startsWith("open br-shared")).count(), "its rules were added once");
    }

    @Test
    void eightConcurrentCreatesWithOneSubnetMakeOneNetwork() throws Exception {
        attacher.slowMillis = 20;
        List<String> errs = atOnce(8, i -> create(id(i), "10.77.0.0/24", "10.77.0.1/24", null));
        assertEquals(1, errs.stream().filter(java.util.Objects::isNull).count(), errs.toString());
        errs.stream().filter(java.util.Objects::nonNull).forEach(e -> assertTrue(e.contains("Pool overlaps"), e));
    }

    // ------------------------------------------------------------ ports

    @Test
    void aHostPortPublishedByAnotherContainerIsRefusedAsDockerDoes() {
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", null));
        assertNull(create(id('b'), "10.1.0.0/24", "10.1.0.1/24", null));
        String e1 = id('e'), e2 = id('f'), e3 = id('c');
        joinedEndpoint(id('a'), e1, "10.0.0.2/24");
        joinedEndpoint(id('b'), e2, "10.1.0.2/24");
        joinedEndpoint(id('a'), e3, "10.0.0.3/24");
        assertNull(publish(id('a'), e1, tcp("", 8080)));
        assertEquals("Bind for 0.0.0.0:8080 failed: port is already allocated", publish(id('b'), e2, tcp("", 8080)), "across networks");
        assertEquals("Bind for 127.0.0.1:8080 failed: port is already allocated", publish(id('a'), e3, tcp("127.0.0.1", 8080)));
        assertNull(publish(id('b'), e2, "{\"Proto\":17,\"Port\":80,\"HostPort\":8080}"), "udp is another port");
        assertNull(publish(id('a'), e3, tcp("", 8081)));
        assertEquals(1, attacher.published.stream().filter(m -> m.toString().contains("hostPort=8080, containerPort=80, protocol=tcp")).count());
        assertNull(err("/NetworkDriver.RevokeExternalConnectivity", "{\"NetworkID\":\"" + id('a') + "\",\"EndpointID\":\"" + e1 + "\"}"));
        assertNull(err("/NetworkDriver.RevokeExternalConnectivity", "{\"NetworkID\":\"" + id('b') + "\",\"EndpointID\":\"" + e2 + "\"}"));
        assertNull(publish(id('b'), e2, tcp("", 8080)), "free again once revoked");
    }

    @Test
    void hostAddressesThatDoNotMeetDoNotCollide() {
        assertNull(create(id('a'), "10.0.0.0/24", "10.0.0.1/24", null));
        String e1 = id('e'), e2 = id('f'), e3 = id('c');
        joinedEndpoint(id('a'), e1, "10.0.0.2/24");
        joinedEndpoint(id('a'), e2, "10.0.0.3/24");
        joinedEndpoint(id('a'), e3, "10.0.0.4/24");
        assertNull(publish(id('a'), e1, tcp("127.0.0.1", 9000)));
        assertNull(publish(id('a'), e2, tcp("127.0.0.2", 9000)));
        assertNotNull(publish(id('a'), e3, tcp("0.0.0.0", 9000)));
        assertNotNull(publish(id('a'), e3, tcp("::", 9000)), ":: takes IPv4 too");
        assertNotNull(publish(id('a'), e3, tcp("", 9001) + "," + tcp("", 9001)), "the same port twice in one request");
    }

    @Test
    void concurrentPublishesOfOneHostPortLetOneThrough() throws Exception {
        int n = 8;
        for (int i = 0; i < n; i++) {
            assertNull(create(id(i), "10." + (60 + i) + ".0.0/24", "10." + (60 + i) + ".0.1/24", null));
            joinedEndpoint(id(i), id(100 + i), "10." + (60 + i) + ".0.2/24");
        }
        attacher.slowMillis = 20;
        List<String> errs = atOnce(n, i -> publish(id(i), id(100 + i), tcp("", 8443)));
        assertEquals(1, errs.stream().filter(java.util.Objects::isNull).count(), errs.toString());
        assertEquals(1, attacher.published.size());
    }
}
