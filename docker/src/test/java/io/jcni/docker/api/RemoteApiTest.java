package io.jcni.docker.api;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.network.FakeAttacher;
import io.jcni.docker.store.MemoryStore;
import io.jcni.types.Json;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every endpoint of the remote API through {@link RemoteApi}: answers, error fields and bad payloads. */
class RemoteApiTest {
    static final String NET = "a".repeat(64);
    static final String EP = "e".repeat(64);
    static final String EP2 = "f".repeat(64);
    static final String SANDBOX = "/var/run/docker/netns/0123456789ab";

    MemoryStore store;
    FakeAttacher attacher;
    CniNetworkDriver network;
    RemoteApi api;

    @BeforeEach
    void setUp() {
        store = new MemoryStore();
        attacher = new FakeAttacher();
        network = new CniNetworkDriver(store, attacher, name -> {
            if (!name.equals("mynet")) throw new DriverException("CreateNetwork: jcni.conflist=" + name + ": no such network");
            return Json.parseObject("{\"cniVersion\":\"1.0.0\",\"plugins\":[{\"type\":\"bridge\",\"bridge\":\"cni9\",\"isDefaultGateway\":true,"
                    + "\"ipam\":{\"type\":\"host-local\",\"subnet\":\"10.9.0.0/24\",\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.5.0/24\"}]}},"
                    + "{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true}}]}");
        }, "local", null);
        api = new RemoteApi(network, new JcniIpam(store), null);
    }

    Map<String, Object> call(String path, String body) {
        RemoteApi.Reply r = api.handle("POST", path, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.status(), r.json());
        return Json.parseObject(r.json());
    }

    /** The error of a NetworkDriver call (field Err). */
    String err(String path, String body) {
        Map<String, Object> m = call(path, body);
        assertFalse(m.containsKey("Error"), m.toString());
        return (String) m.get("Err");
    }

    /** The error of an IpamDriver call (field Error). */
    String ipamErr(String path, String body) {
        Map<String, Object> m = call(path, body);
        assertFalse(m.containsKey("Err"), m.toString());
        return (String) m.get("Error");
    }

    void ok(String path, String body) {
        Map<String, Object> m = call(path, body);
        assertNull(m.get("Err"), m.toString());
        assertNull(m.get("Error"), m.toString());
    }

    static String createNetwork(String options) {
        return "{\"NetworkID\":\"" + NET + "\",\"Options\":" + options
                + ",\"IPv4Data\":[{\"AddressSpace\":\"\",\"Pool\":\"10.0.0.0/24\",\"Gateway\":\"10.0.0.1/24\"}],\"IPv6Data\":[]}";
    }

    void network(String generic) {
        ok("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.enable_ipv6\":false,\"com.docker.network.generic\":" + generic + "}"));
    }

    void endpoint(String id, String address) {
        ok("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + id + "\",\"Interface\":{\"Address\":\""
                + address + "\",\"AddressIPv6\":\"\",\"MacAddress\":\"\"},\"Options\":{\"com.docker.network.endpoint.exposedports\":[]}}");
    }

    Map<String, Object> join(String id) {
        return call("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + id + "\",\"SandboxKey\":\"" + SANDBOX
                + "\",\"Options\":null}");
    }

    static String ref(String ep) {
        return "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + ep + "\"}";
    }

    // ------------------------------------------------------------ plumbing

    @Test
    void activateAndCapabilitiesNeedNoBody() {
        assertEquals(List.of("NetworkDriver", "IpamDriver"), call("/Plugin.Activate", "").get("Implements"));
        assertEquals(Map.of("Scope", "local", "ConnectivityScope", "local"), call("/NetworkDriver.GetCapabilities", null));
        assertEquals(Map.of("RequiresMACAddress", false, "RequiresRequestReplay", false), call("/IpamDriver.GetCapabilities", ""));
        assertEquals(Map.of("LocalDefaultAddressSpace", "local_scope", "GlobalDefaultAddressSpace", "global_scope"),
                call("/IpamDriver.GetDefaultAddressSpaces", "{}"));
    }

    @Test
    void unknownPathIs404AndOtherMethodsAre405() {
        RemoteApi.Reply r = api.handle("POST", "/NetworkDriver.Nope", new byte[0]);
        assertEquals(404, r.status());
        assertTrue(Json.parseObject(r.json()).get("Err").toString().contains("/NetworkDriver.Nope"));
        assertEquals(404, api.handle("POST", "/", new byte[0]).status());
        assertEquals(405, api.handle("GET", "/Plugin.Activate", new byte[0]).status());
    }

    static List<String> pathsWithBodies() {
        return RemoteApi.paths().stream().filter(p -> !p.endsWith("Activate") && !p.endsWith("GetCapabilities")
                && !p.endsWith("GetDefaultAddressSpaces")).toList();
    }

    /** dockerd resends a call with an empty body after a dropped connection: refused, in the right field, saying why. */
    @ParameterizedTest
    @MethodSource("pathsWithBodies")
    void emptyBodyRetryIsRefusedWithAnExplanation(String path) {
        for (String body : new String[] {null, "", "  \n", "null"}) {
            Map<String, Object> m = call(path, body);
            String field = path.startsWith("/IpamDriver") ? "Error" : "Err";
            assertEquals(1, m.size(), m.toString());
            assertTrue(((String) m.get(field)).contains("empty request body"), m.toString());
            assertTrue(((String) m.get(field)).contains("not carried out"), m.toString());
        }
        assertTrue(attacher.calls.isEmpty());
    }

    @ParameterizedTest
    @MethodSource("pathsWithBodies")
    void malformedBodiesAreRefused(String path) {
        String field = path.startsWith("/IpamDriver") ? "Error" : "Err";
        for (String body : new String[] {"{", "[1,2]", "\"x\"", "{\"NetworkID\":5,\"PoolID\":7,\"DiscoveryType\":\"x\"}"}) {
            Map<String, Object> m = call(path, body);
            assertNotNull(m.get(field), path + " " + body + " -> " + m);
            assertFalse(((String) m.get(field)).contains("Exception"), m.toString());
        }
    }

    @Test
    void idsMustBeTame() {
        assertTrue(err("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"../../etc\"}").contains("not an ID"));
        assertTrue(err("/NetworkDriver.DeleteNetwork", "{}").contains("NetworkID: missing"));
        assertTrue(ipamErr("/IpamDriver.ReleasePool", "{\"PoolID\":\"a/b\"}").contains("not an ID"));
    }

    // ------------------------------------------------------------ IPAM

    @Test
    void requestPoolWithSubnetRangeAndGateway() {
        Map<String, Object> p = call("/IpamDriver.RequestPool",
                "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.0.0.0/16\",\"SubPool\":\"10.0.5.0/24\",\"Options\":{},\"V6\":false}");
        String id = (String) p.get("PoolID");
        assertEquals("10.0.0.0/16", p.get("Pool"));
        assertEquals(Map.of(), p.get("Data"));
        Map<String, Object> gw = call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id
                + "\",\"Address\":\"10.0.0.1\",\"Options\":{\"RequestAddressType\":\"com.docker.network.gateway\"}}");
        assertEquals("10.0.0.1/16", gw.get("Address"));
        // automatic addresses come from the range; --ip may be anywhere in the pool
        assertEquals("10.0.5.1/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"\",\"Options\":{}}").get("Address"));
        assertEquals("10.0.5.2/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}").get("Address"));
        assertEquals("10.0.9.9/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.0.9.9\"}").get("Address"));
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.0.9.9\"}").contains("already in use"));
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.1.0.1\"}").contains("not in the pool"));
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.0.0.0\"}").contains("network or broadcast"));
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"fe80::1\"}").contains("not in the pool"));
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"ten\"}").contains("not an IP address"));
        ok("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.0.5.1\"}");
        ok("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + id + "\",\"Address\":\"10.0.5.1\"}"); // again: fine
        assertEquals("10.0.5.1/16", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}").get("Address"));
        assertTrue(ipamErr("/IpamDriver.ReleaseAddress", "{\"PoolID\":\"" + id + "\"}").contains("Address: missing"));
    }

    @Test
    void requestPoolIsIdempotentWithReferenceCounts() {
        String req = "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.0.0/24\"}";
        String id = (String) call("/IpamDriver.RequestPool", req).get("PoolID");
        assertEquals(id, call("/IpamDriver.RequestPool", req).get("PoolID"));
        call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}");
        ok("/IpamDriver.ReleasePool", "{\"PoolID\":\"" + id + "\"}");
        assertEquals("10.1.0.2/24", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}").get("Address"), "still there");
        ok("/IpamDriver.ReleasePool", "{\"PoolID\":\"" + id + "\"}");
        assertTrue(ipamErr("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}").contains("no pool"));
        assertTrue(ipamErr("/IpamDriver.ReleasePool", "{\"PoolID\":\"" + id + "\"}").contains("no pool"));
        assertTrue(store.list("pools").isEmpty());
    }

    @Test
    void requestPoolRefusals() {
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"mine\",\"Pool\":\"10.1.0.0/24\"}").contains("unknown address space"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"Pool\":\"10.1.0.0/24\"}").contains("AddressSpace: missing"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.0.1/24\"}").contains("host bits"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.0.0/24\",\"SubPool\":\"10.2.0.0/25\"}")
                .contains("not inside"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"SubPool\":\"10.2.0.0/25\"}").contains("needs a --subnet"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"fd00::/64\"}").contains("IPv4"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.0.0\"}").contains("prefix length"));
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"V6\":\"yes\"}").contains("true or false"));
        call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.0.0/16\"}");
        assertTrue(ipamErr("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.1.2.0/24\"}").contains("overlaps"));
        // the same subnet in the other address space is another pool
        assertNull(call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"global_scope\",\"Pool\":\"10.1.2.0/24\"}").get("Error"));
    }

    @Test
    void defaultPoolsAreDistinctAndSkipUsedOnes() {
        call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.203.0.0/24\"}");
        assertEquals("10.203.1.0/24", call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\"}").get("Pool"));
        assertEquals("10.203.2.0/24", call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\"}").get("Pool"));
        Map<String, Object> v6 = call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"V6\":true}");
        assertEquals("fd6a:636e:6900::/64", v6.get("Pool"));
        assertEquals("fd6a:636e:6900:1::/64", call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"V6\":true}").get("Pool"));
        assertEquals("fd6a:636e:6900::1/64", call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + v6.get("PoolID")
                + "\",\"Options\":{\"RequestAddressType\":\"com.docker.network.gateway\"}}").get("Address"));
    }

    @Test
    void poolsSurviveARestart() {
        String id = (String) call("/IpamDriver.RequestPool", "{\"AddressSpace\":\"local_scope\",\"Pool\":\"10.3.0.0/30\"}").get("PoolID");
        call("/IpamDriver.RequestAddress", "{\"PoolID\":\"" + id + "\"}");
        RemoteApi again = new RemoteApi(network, new JcniIpam(store), null);
        Map<String, Object> m = Json.parseObject(again.handle("POST", "/IpamDriver.RequestAddress",
                ("{\"PoolID\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)).json());
        assertEquals("10.3.0.2/30", m.get("Address"));
        m = Json.parseObject(again.handle("POST", "/IpamDriver.RequestAddress", ("{\"PoolID\":\"" + id + "\"}").getBytes(StandardCharsets.UTF_8)).json());
        assertTrue(((String) m.get("Error")).contains("no free address"), m.toString());
    }

    // ------------------------------------------------------------ networks

    @Test
    void createNetworkGeneratesAChainFromOptions() {
        network("{\"jcni.plugins\":\"bridge, portmap,bandwidth,firewall\",\"com.docker.network.bridge.name\":\"br-test\","
                + "\"com.docker.network.driver.mtu\":\"1400\"}");
        var n = network.networks().get(NET);
        assertEquals(List.of("bridge", "portmap", "bandwidth", "firewall"), n.plugins());
        assertEquals("br-test", n.bridge());
        assertEquals(1400, n.mtu());
        assertFalse(n.internal());
        assertEquals(List.of("open br-test masquerade [10.0.0.0/24]"), attacher.calls);
        ok("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{}}")); // repeated: kept as it was
        assertEquals("br-test", network.networks().get(NET).bridge());
        assertTrue(store.get("networks", NET).isPresent());
    }

    @Test
    void bandwidthOptionsGoToTheBandwidthPlugin() {
        network("{\"jcni.plugins\":\"bridge,bandwidth\",\"jcni.bandwidth.ingressRate\":\"8000000\",\"jcni.bandwidth.ingressBurst\":\"80000\"}");
        assertEquals(Map.of("ingressRate", 8000000L, "ingressBurst", 80000L), network.networks().get(NET).bandwidth());
        endpoint(EP, "10.0.0.2/24");
        join(EP);
        Map<?, ?> bw = attacher.added.getFirst().plugins().get(1).raw();
        assertEquals("bandwidth", bw.get("type"));
        assertEquals(8000000L, bw.get("ingressRate"));
        assertEquals(80000L, bw.get("ingressBurst"));
        CniNetworkDriver restarted = new CniNetworkDriver(store, attacher, n -> null, "local", null);
        assertEquals(network.networks().get(NET), restarted.networks().get(NET), "kept across a restart");
    }

    @Test
    void bandwidthOptionRefusals() {
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.bandwidth.ingressRate\":\"1000\","
                + "\"jcni.bandwidth.ingressBurst\":\"1000\"}}")).contains("needs bandwidth"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugins\":\"bridge,bandwidth\","
                + "\"jcni.bandwidth.egressRate\":\"1000\"}}")).contains("go together"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugins\":\"bridge,bandwidth\","
                + "\"jcni.bandwidth.egressRate\":\"fast\",\"jcni.bandwidth.egressBurst\":\"1\"}}")).contains("positive whole number"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.bandwidth.rate\":\"1\"}}"))
                .contains("unknown option"));
    }

    @Test
    void internalAndDefaults() {
        ok("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.internal\":true,\"com.docker.network.generic\":{}}"));
        var n = network.networks().get(NET);
        assertTrue(n.internal());
        assertEquals(List.of("bridge", "portmap"), n.plugins());
        assertEquals("jc-aaaaaaaaaaaa", n.bridge());
        assertEquals(List.of("open jc-aaaaaaaaaaaa internal"), attacher.calls);
    }

    @Test
    void createNetworkRefusals() {
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugin\":\"bridge\"}}"))
                .contains("unknown option jcni.plugin"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugins\":\"portmap\"}}"))
                .contains("must start with bridge"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugins\":\"bridge,macvlan\"}}"))
                .contains("cannot be chained"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.plugins\":\"bridge,portmap,portmap\"}}"))
                .contains("twice"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"com.docker.network.driver.mtu\":\"big\"}}"))
                .contains("mtu"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"com.docker.network.bridge.name\":\"a-very-long-bridge-name\"}}"))
                .contains("not an interface name"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.conflist\":\"nope\"}}"))
                .contains("no such network"));
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"jcni.conflist\":\"mynet\",\"jcni.plugins\":\"bridge\"}}"))
                .contains("not both"));
        assertTrue(err("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + NET + "\",\"IPv4Data\":[]}").contains("no IPv4Data"));
        assertTrue(err("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + NET
                + "\",\"IPv4Data\":[{\"Pool\":\"10.0.0.0/24\",\"Gateway\":\"10.0.1.1/24\"}]}").contains("outside the pool"));
        assertTrue(err("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + NET + "\",\"IPv4Data\":[{\"Gateway\":\"10.0.1.1/24\"}]}")
                .contains("Pool: missing"));
        assertTrue(err("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + NET + "\",\"IPv4Data\":{}}").contains("expected a list"));
        assertTrue(network.networks().isEmpty());
        network("{\"com.docker.network.bridge.name\":\"br-x\"}");
        String other = "b".repeat(64);
        assertTrue(err("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.generic\":{\"com.docker.network.bridge.name\":\"br-x\"}}")
                .replace(NET, other)).contains("networks have same bridge name"));
    }

    @Test
    void allocateFreeAndDiscoveryAreAccepted() {
        assertEquals(Map.of(), call("/NetworkDriver.AllocateNetwork", "{\"NetworkID\":\"" + NET + "\",\"Options\":{\"a\":\"b\"}}").get("Options"));
        ok("/NetworkDriver.FreeNetwork", "{\"NetworkID\":\"" + NET + "\"}");
        ok("/NetworkDriver.DiscoverNew", "{\"DiscoveryType\":1,\"DiscoveryData\":{\"Address\":\"10.0.0.5\",\"self\":true}}");
        ok("/NetworkDriver.DiscoverDelete", "{\"DiscoveryType\":1,\"DiscoveryData\":null}");
        assertTrue(err("/NetworkDriver.DiscoverNew", "{\"DiscoveryType\":-1}").contains("DiscoveryType"));
    }

    // ------------------------------------------------------------ endpoints

    @Test
    void endpointLifecycle() {
        network("{}");
        endpoint(EP, "10.0.0.2/24");
        endpoint(EP, "10.0.0.2/24"); // repeated: fine
        Map<String, Object> j = join(EP);
        assertEquals(Map.of("SrcName", "jcveeeeeeeeeee", "DstPrefix", "eth"), j.get("InterfaceName"));
        assertEquals("10.0.0.1", j.get("Gateway"));
        assertNull(j.get("GatewayIPv6"));
        assertEquals(true, j.get("DisableGatewayService"));
        assertNull(j.get("Err"));
        var list = attacher.added.getFirst();
        assertEquals("docker-aaaaaaaaaaaa", list.name());
        var ipam = (Map<?, ?>) list.plugins().getFirst().raw().get("ipam");
        assertEquals("static", ipam.get("type"));
        assertEquals(List.of(Map.of("address", "10.0.0.2/24", "gateway", "10.0.0.1")), ipam.get("addresses"));
        assertEquals(false, list.plugins().getFirst().raw().get("ipMasq"), "masqueraded per network, not per container");
        assertEquals(join(EP), j, "joining the same sandbox again answers the same");
        assertEquals(1, attacher.added.size());

        ok("/NetworkDriver.ProgramExternalConnectivity", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"Options\":{"
                + "\"com.docker.network.endpoint.exposedports\":[{\"Proto\":6,\"Port\":80}],"
                + "\"com.docker.network.portmap\":[{\"Proto\":6,\"IP\":\"\",\"Port\":80,\"HostIP\":\"\",\"HostPort\":8080,\"HostPortEnd\":8080},"
                + "{\"Proto\":17,\"IP\":\"\",\"Port\":53,\"HostIP\":\"127.0.0.1\",\"HostPort\":5353,\"HostPortEnd\":5353}]}}");
        assertEquals(List.of(Map.of("hostPort", 8080L, "containerPort", 80L, "protocol", "tcp"),
                Map.of("hostPort", 5353L, "containerPort", 53L, "protocol", "udp", "hostIP", "127.0.0.1")), attacher.published.getFirst());
        Map<String, Object> info = Json.asObject(call("/NetworkDriver.EndpointOperInfo", ref(EP)).get("Value"));
        assertEquals(2, ((List<?>) info.get("com.docker.network.portmap")).size());
        ok("/NetworkDriver.RevokeExternalConnectivity", ref(EP));
        ok("/NetworkDriver.RevokeExternalConnectivity", ref(EP)); // nothing left to revoke
        ok("/NetworkDriver.Leave", ref(EP));
        ok("/NetworkDriver.Leave", ref(EP));
        ok("/NetworkDriver.DeleteEndpoint", ref(EP));
        ok("/NetworkDriver.DeleteEndpoint", ref(EP));
        assertEquals(List.of("open jc-aaaaaaaaaaaa masquerade [10.0.0.0/24]", "add " + EP + " jcveeeeeeeeeee", "publish " + EP,
                "unpublish " + EP, "del " + EP + " jcveeeeeeeeeee", "drop jcveeeeeeeeeee later"), attacher.calls);
        ok("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + NET + "\"}");
        ok("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + NET + "\"}");
        assertEquals("remove docker-aaaaaaaaaaaa jc-aaaaaaaaaaaa masquerade [10.0.0.0/24] delete-bridge", attacher.calls.getLast());
        assertTrue(store.list("endpoints").isEmpty());
        assertTrue(store.list("networks").isEmpty());
    }

    @Test
    void internalNetworksAnswerNoGatewayAndGetNone() {
        ok("/NetworkDriver.CreateNetwork", createNetwork("{\"com.docker.network.internal\":true}"));
        endpoint(EP, "10.0.0.2/24");
        Map<String, Object> j = join(EP);
        assertNull(j.get("Gateway"));
        Map<?, ?> bridge = attacher.added.getFirst().plugins().getFirst().raw();
        assertEquals(false, bridge.get("isGateway"));
        assertEquals(false, bridge.get("ipMasq"));
        assertEquals(List.of(Map.of("address", "10.0.0.2/24")), ((Map<?, ?>) bridge.get("ipam")).get("addresses"));
    }

    @Test
    void ipv6EndpointsGetBothAddresses() {
        ok("/NetworkDriver.CreateNetwork", "{\"NetworkID\":\"" + NET + "\",\"Options\":{\"com.docker.network.enable_ipv6\":true},"
                + "\"IPv4Data\":[{\"Pool\":\"10.0.0.0/24\",\"Gateway\":\"10.0.0.1/24\"}],\"IPv6Data\":[{\"Pool\":\"fd00:1::/64\",\"Gateway\":\"fd00:1::1/64\"}]}");
        ok("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.0.0.2/24\",\"AddressIPv6\":\"fd00:1::2/64\",\"MacAddress\":\"02:42:0a:00:00:02\"}}");
        Map<String, Object> j = join(EP);
        assertEquals("fd00:1::1", j.get("GatewayIPv6"));
        Map<?, ?> bridge = attacher.added.getFirst().plugins().getFirst().raw();
        assertEquals(Map.of("cni", Map.of("mac", "02:42:0a:00:00:02")), bridge.get("args"));
        assertEquals(2, ((List<?>) ((Map<?, ?>) bridge.get("ipam")).get("addresses")).size());
    }

    @Test
    void conflistNetworksKeepTheirPluginsButUseDockersAddresses() {
        network("{\"jcni.conflist\":\"mynet\"}");
        endpoint(EP, "10.0.0.7/24");
        join(EP);
        var list = attacher.added.getFirst();
        assertEquals("docker-aaaaaaaaaaaa", list.name());
        Map<?, ?> bridge = list.plugins().getFirst().raw();
        assertEquals("cni9", bridge.get("bridge"));
        assertEquals(false, bridge.get("isDefaultGateway"));
        Map<?, ?> ipam = (Map<?, ?>) bridge.get("ipam");
        assertEquals("static", ipam.get("type"));
        assertEquals(List.of(Map.of("dst", "192.168.5.0/24")), ipam.get("routes"));
        assertEquals("portmap", list.plugins().get(1).type());
        assertEquals("open cni9", attacher.calls.getFirst());
        ok("/NetworkDriver.Leave", ref(EP));
        ok("/NetworkDriver.DeleteEndpoint", ref(EP));
        ok("/NetworkDriver.DeleteNetwork", "{\"NetworkID\":\"" + NET + "\"}");
        assertEquals("remove docker-aaaaaaaaaaaa cni9", attacher.calls.getLast(), "a conflist's bridge is not ours to delete");
    }

    @Test
    void endpointRefusals() {
        assertTrue(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\"}").contains("no network"));
        network("{}");
        assertTrue(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\"}").contains("no Address"));
        assertTrue(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.0.0.2\"}}").contains("prefix length"));
        assertTrue(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.0.0.2/24\",\"MacAddress\":\"zz\"}}").contains("not a MAC"));
        endpoint(EP, "10.0.0.2/24");
        assertTrue(err("/NetworkDriver.CreateEndpoint", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP
                + "\",\"Interface\":{\"Address\":\"10.0.0.3/24\"}}").contains("other settings"));
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP2 + "\",\"SandboxKey\":\"/x\"}").contains("no endpoint"));
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"x\"}").contains("absolute path"));
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"/a/../b\"}").contains("absolute path"));
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\"}").contains("SandboxKey: missing"));
        assertTrue(err("/NetworkDriver.Leave", ref(EP2)).contains("no endpoint"));
        assertTrue(err("/NetworkDriver.EndpointOperInfo", ref(EP2)).contains("no endpoint"));
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", ref(EP)).contains("not joined"));
        join(EP);
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"/other\"}")
                .contains("already joined"));
        String pe = "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"Options\":{\"com.docker.network.portmap\":[%s]}}";
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", pe.formatted("{\"Proto\":6,\"Port\":80,\"HostPort\":0}")).contains("no host port"));
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", pe.formatted("{\"Proto\":1,\"Port\":80,\"HostPort\":80}")).contains("IP protocol 1"));
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", pe.formatted("{\"Proto\":6,\"Port\":70000,\"HostPort\":80}")).contains("Port"));
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", pe.formatted("{\"Proto\":6,\"Port\":80,\"HostIP\":\"x\",\"HostPort\":80}")).contains("HostIP"));
        assertTrue(err("/NetworkDriver.ProgramExternalConnectivity", pe.formatted("7")).contains("expected an object"));
        ok("/NetworkDriver.ProgramExternalConnectivity", pe.formatted(""));
        assertTrue(attacher.published.isEmpty(), "no ports, nothing to publish");
    }

    @Test
    void aFailedAddIsUndoneAndReported() {
        network("{}");
        endpoint(EP, "10.0.0.2/24");
        attacher.failAdd = new DriverException("CNI ADD on docker-aaaaaaaaaaaa failed: boom");
        assertTrue(err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"" + SANDBOX + "\"}")
                .contains("boom"));
        assertFalse(network.endpoints().get(EP).joined());
        assertEquals("del " + EP + " jcveeeeeeeeeee", attacher.calls.getLast());
        attacher.failAdd = new IllegalStateException("bug");
        String e = err("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP + "\",\"SandboxKey\":\"" + SANDBOX + "\"}");
        assertTrue(e.contains("internal error") && e.contains("bug"), e);
    }

    @Test
    void reconcileCleansUpEndpointsWhoseSandboxIsGone() {
        network("{}");
        endpoint(EP, "10.0.0.2/24");
        endpoint(EP2, "10.0.0.3/24");
        join(EP);
        call("/NetworkDriver.Join", "{\"NetworkID\":\"" + NET + "\",\"EndpointID\":\"" + EP2 + "\",\"SandboxKey\":\"/run/alive\"}");
        attacher.sandboxes.add("/run/alive");
        attacher.calls.clear();
        CniNetworkDriver restarted = new CniNetworkDriver(store, attacher, n -> null, "local", null);
        assertEquals(2, restarted.endpoints().size());
        assertEquals(0, restarted.reconcile(), "just joined: the sandbox may not exist yet");
        attacher.calls.clear();
        assertEquals(1, restarted.reconcileAt(System.currentTimeMillis() + 61_000));
        assertEquals(List.of("open jc-aaaaaaaaaaaa masquerade [10.0.0.0/24]", "del " + EP + " jcveeeeeeeeeee"), attacher.calls);
        assertFalse(restarted.endpoints().get(EP).joined());
        assertTrue(restarted.endpoints().get(EP2).joined());
    }
}
