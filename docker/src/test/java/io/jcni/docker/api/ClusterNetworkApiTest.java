package io.jcni.docker.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.docker.cluster.ClusterKeys;
import io.jcni.docker.cluster.ClusterPool;
import io.jcni.docker.cluster.ClusterNetwork;
import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.ipam.SharedPools;
import io.jcni.docker.network.ClusterMembership;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.network.DockerNetwork;
import io.jcni.docker.network.Endpoint;
import io.jcni.docker.network.FakeAttacher;
import io.jcni.docker.store.MemorySharedStore;
import io.jcni.docker.store.MemoryStore;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code -o jcni.cluster=NAME} through the remote API, with the shared store in memory and a
 * recording membership in place of etcd and VXLAN: the IPAM's container addresses come from the
 * shared pool, the MTU is the underlay's minus 50, Join publishes and Leave withdraws.
 */
class ClusterNetworkApiTest {
    static final String NET = "c".repeat(64);
    static final String EP = "e".repeat(64);

    MemoryStore store;
    MemorySharedStore shared;
    CniNetworkDriver network;
    JcniIpam ipam;
    RemoteApi api;
    final List<String> calls = new ArrayList<>();

    @BeforeEach
    void setUp() {
        store = new MemoryStore();
        shared = new MemorySharedStore();
        network = new CniNetworkDriver(store, new FakeAttacher(), n -> null, "local", null);
        ipam = new JcniIpam(store);
        api = new RemoteApi(network, ipam, null);
    }

    /** Joins as Cluster does, minus etcd's lease and the kernel. */
    void withCluster() {
        network.cluster(new ClusterMembership() {
            @Override
            public int mtu() {
                return 1450;
            }

            @Override
            public void join(DockerNetwork n) {
                ClusterNetwork def = new ClusterNetwork(n.cluster(), 4242, link(n.subnet(false), n.cluster()), link(n.subnet(true), n.cluster()), n.internal());
                for (boolean v6 : new boolean[] {false, true}) {
                    if (def.subnet(v6) != null) {
                        shared.update(ClusterKeys.cluster(n.cluster()), ClusterKeys.pool(v6), cur -> cur.orElseGet(() -> ClusterPool.initial(def, v6).toJson()));
                    }
                }
                calls.add("join " + n.cluster() + " mtu=" + n.mtu());
            }

            @Override
            public void leave(DockerNetwork n) {
                calls.add("leave " + n.cluster());
            }

            @Override
            public void publish(DockerNetwork n, Endpoint e) {
                calls.add("publish " + e.address() + " " + e.mac());
            }

            @Override
            public void withdraw(DockerNetwork n, Endpoint e) {
                calls.add("withdraw " + e.address());
            }

            @Override
            public void resume(DockerNetwork n, List<Endpoint> running) {
                calls.add("resume " + running.size());
            }
        });
        ipam.sharedPools(new SharedPools() {
            @Override
            public IpAddr take(String cluster, boolean v6, IpAddr wanted) {
                return ClusterPool.take(shared, cluster, v6, wanted, "h1");
            }

            @Override
            public void give(String cluster, IpAddr address) {
                ClusterPool.give(shared, cluster, address);
            }
        });
    }

    ClusterNetwork.Subnet link(DockerNetwork.Subnet s, String cluster) {
        if (s == null) return null;
        var local = ipam.linkCluster(s.pool(), cluster);
        return new ClusterNetwork.Subnet(s.pool(), local.range(), s.gateway().address());
    }

    Map<String, Object> call(String path, String body) {
        RemoteApi.Reply r = api.handle("POST", path, body.getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.status(), r.json());
        return Json.parseObject(r.json());
    }

    /** This host's IPv4 pool 10.77.0.0/16 (range 10.77.3.0/24) and its gateway 10.77.0.1, as libnetwork asks for them. */
    String poolAndGateway() {
        return poolAndGateway("{\"Pool\":\"10.77.0.0/16\",\"SubPool\":\"10.77.3.0/24\",\"V6\":false", "10.77.0.1", "10.77.0.1/16");
    }

    /** An IPv6 pool of this host (fd77::/64) and its gateway, the first free address (fd77::1), as libnetwork asks for them with --ipv6. */
    String pool6AndGateway() {
        return poolAndGateway("{\"Pool\":\"fd77::/64\",\"SubPool\":\"\",\"V6\":true", "", "fd77::1/64");
    }

    /** RequestPool with {@code pool} (the JSON object's pool fields, open), then the gateway: {@code wanted} ("" for any) is {@code expected}. */
    String poolAndGateway(String pool, String wanted, String expected) {
        String id = (String) call("/IpamDriver.RequestPool", pool + ",\"AddressSpace\":\"local_scope\",\"Options\":{}}").get("PoolID");
        assertEquals(expected, call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"" + wanted
                + "\",\"Options\":{\"RequestAddressType\":\"com.docker.network.gateway\"}}").get("Address"));
        return id;
    }

    static String create(String generic) {
        return "{\"NetworkID\":\"" + NET + "\",\"Options\":{\"com.docker.network.generic\":" + generic + "},"
                + "\"IPv4Data\":[{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.77.0.0/16\",\"Gateway\":\"10.77.0.1/16\"}],\"IPv6Data\":[]}";
    }

    static String createDualStack(String generic) {
        return "{\"NetworkID\":\"" + NET + "\",\"Options\":{\"com.docker.network.enable_ipv6\":true,\"com.docker.network.generic\":" + generic + "},"
                + "\"IPv4Data\":[{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.77.0.0/16\",\"Gateway\":\"10.77.0.1/16\"}],"
                + "\"IPv6Data\":[{\"AddressSpace\":\"local_scope\",\"Pool\":\"fd77::/64\",\"Gateway\":\"fd77::1/64\"}]}";
    }

    @Test
    void aDualStackClusterNetworkTakesBothAddressesFromTheSharedPoolsAndAnswersGatewayIPv6() {
        withCluster();
        String pool = poolAndGateway(), pool6 = pool6AndGateway();
        assertNull(call("/NetworkDriver.CreateNetwork", createDualStack("{\"jcni.cluster\":\"web\"}")).get("Err"));
        assertTrue(network.networks().get(NET).ipv6());
        // Another host took fd77::2 meanwhile (the gateway fd77::1 is taken from the start): this one gets the next.
        assertEquals(IpAddr.parse("fd77::2"), ClusterPool.take(shared, "web", true, null, "h2"));
        assertEquals("10.77.3.1/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + pool + "\",\"Address\":\"\",\"Options\":{}}").get("Address"));
        assertEquals("fd77::3/64", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + pool6 + "\",\"Address\":\"\",\"Options\":{}}").get("Address"));
        // A fixed --ip6 is reserved cluster-wide: another host cannot have it.
        assertEquals("fd77::99/64", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + pool6 + "\",\"Address\":\"fd77::99\",\"Options\":{}}").get("Address"));
        String taken = assertThrows(DriverException.class, () -> ClusterPool.take(shared, "web", true, IpAddr.parse("fd77::99"), "h2")).getMessage();
        assertTrue(taken.contains("already in use"), taken);
        assertNull(call("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.77.3.1/16\",\"AddressIPv6\":\"fd77::3/64\",\"MacAddress\":\"\"},\"Options\":{}}").get("Err"));
        Map<String, Object> join = call("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"SandboxKey\":\"/var/run/docker/netns/x\",\"Options\":null}");
        assertEquals("fd77::1", join.get("GatewayIPv6"));
        assertEquals("10.77.0.1", join.get("Gateway"));
        assertEquals("publish 10.77.3.1/16 02:6a:0a:4d:03:01", calls.get(1));
        ClusterPool.Shared v6 = ClusterPool.read(shared, "web", true).orElseThrow();
        assertEquals(Set.of(IpAddr.parse("fd77::1"), IpAddr.parse("fd77::2"), IpAddr.parse("fd77::3"), IpAddr.parse("fd77::99")), v6.pool().allocated());
        assertEquals("h1", v6.owners().get(IpAddr.parse("fd77::3")));
        assertNull(call("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + pool6 + "\",\"Address\":\"fd77::3\"}").get("Error"));
        assertFalse(ClusterPool.read(shared, "web", true).orElseThrow().pool().allocated().contains(IpAddr.parse("fd77::3")));
        // The IPv6 gateway stays this host's too: released locally, never in the shared pool.
        assertNull(call("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + pool6 + "\",\"Address\":\"fd77::1\"}").get("Error"));
        assertTrue(ClusterPool.read(shared, "web", true).orElseThrow().pool().allocated().contains(IpAddr.parse("fd77::1")));
    }

    @Test
    void anInternalDualStackClusterNetworkAnswersNoGateway() {
        withCluster();
        poolAndGateway();
        pool6AndGateway();
        String body = createDualStack("{\"jcni.cluster\":\"web\"}").replace("\"Options\":{", "\"Options\":{\"com.docker.network.internal\":true,");
        assertNull(call("/NetworkDriver.CreateNetwork", body).get("Err"));
        assertNull(call("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.77.3.1/16\",\"AddressIPv6\":\"fd77::3/64\",\"MacAddress\":\"\"},\"Options\":{}}").get("Err"));
        Map<String, Object> join = call("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"SandboxKey\":\"/var/run/docker/netns/x\",\"Options\":null}");
        assertNull(join.get("GatewayIPv6"));
        assertNull(join.get("Gateway"));
    }

    @Test
    void aClusterNetworkWithTwoIPv6SubnetsIsRefused() {
        withCluster();
        poolAndGateway();
        pool6AndGateway();
        String body = createDualStack("{\"jcni.cluster\":\"web\"}").replace("}]}", "},{\"AddressSpace\":\"local_scope\",\"Pool\":\"fd78::/64\",\"Gateway\":\"fd78::1/64\"}]}");
        String err = (String) call("/NetworkDriver.CreateNetwork", body).get("Err");
        assertTrue(err != null && err.contains("one IPv6 subnet"), err);
    }

    @Test
    void withoutTheSharedStoreAClusterNetworkIsRefusedSayingWhatIsMissing() {
        poolAndGateway();
        String err = (String) call("/NetworkDriver.CreateNetwork", create("{\"jcni.cluster\":\"web\"}")).get("Err");
        assertTrue(err.contains("--etcd-endpoints"), err);
        assertTrue(network.networks().isEmpty());
    }

    @Test
    void badClusterNamesAndCombinationsAreRefused() {
        withCluster();
        poolAndGateway();
        assertTrue(((String) call("/NetworkDriver.CreateNetwork", create("{\"jcni.cluster\":\"a/b\"}")).get("Err")).contains("jcni.cluster"));
        assertTrue(((String) call("/NetworkDriver.CreateNetwork", create("{\"jcni.cluster\":\"web\",\"com.docker.network.driver.mtu\":\"1500\"}"))
                .get("Err")).contains("at most 1450"));
        assertTrue(calls.isEmpty(), calls.toString());
    }

    @Test
    void addressesComeFromTheSharedPoolAndEndpointsArePublished() {
        withCluster();
        String pool = poolAndGateway();
        assertNull(call("/NetworkDriver.CreateNetwork", create("{\"jcni.cluster\":\"web\"}")).get("Err"));
        assertEquals(List.of("join web mtu=1450"), calls);
        assertEquals(1450, network.networks().get(NET).mtu());
        // Another host took 10.77.3.1 meanwhile: this one gets the next.
        assertEquals(IpAddr.parse("10.77.3.1"), ClusterPool.take(shared, "web", false, null, "h1"));
        assertEquals("10.77.3.2/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + pool + "\",\"Address\":\"\",\"Options\":{}}").get("Address"));
        assertNull(call("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.77.3.2/16\",\"AddressIPv6\":\"\",\"MacAddress\":\"\"},\"Options\":{}}").get("Err"));
        assertNull(call("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"SandboxKey\":\"/var/run/docker/netns/x\",\"Options\":null}").get("Err"));
        assertEquals("publish 10.77.3.2/16 02:6a:0a:4d:03:02", calls.get(1));
        assertNull(call("/NetworkDriver.Leave", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\"}").get("Err"));
        assertEquals("withdraw 10.77.3.2/16", calls.get(2));
        assertNull(call("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + pool + "\",\"Address\":\"10.77.3.2\"}").get("Error"));
        assertEquals(IpAddr.parse("10.77.3.2"), ClusterPool.take(shared, "web", false, null, "h1")); // given back to the cluster
        // The gateway stays this host's: released locally, never in the shared pool.
        assertNull(call("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + pool + "\",\"Address\":\"10.77.0.1\"}").get("Error"));
        assertNull(call("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + NET + "\"}").get("Err"));
        assertEquals("leave web", calls.getLast());
        assertTrue(Cidr.parse("10.77.0.0/16").contains(IpAddr.parse("10.77.3.2")));
    }
}
