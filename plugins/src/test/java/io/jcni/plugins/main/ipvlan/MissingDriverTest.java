package io.jcni.plugins.main.ipvlan;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ipvlan, vlan and dummy on a kernel: where the driver is missing (this machine's kernel has none
 * of the three), ADD must answer code 50 naming the missing support and leave nothing behind: no
 * link in the container or the host, no address allocated, and DEL must still succeed. Where the
 * driver exists, the same ADD must work and DEL must remove it. Their requests are verified byte
 * for byte against iproute2's in the linux module (NewLinkFixturesTest).
 */
@Tag("root")
class MissingDriverTest {
    private NetWorld w;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("host-local");
        assertEquals(0, NetWorld.in(w.hostName, "ip", "link", "add", "par0", "type", "veth", "peer", "name", "par1").rc());
        assertEquals(0, NetWorld.in(w.hostName, "ip", "link", "set", "par0", "up").rc());
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    private String conf(String type) {
        String extra = switch (type) {
            case "ipvlan" -> "\"master\":\"par0\",\"mode\":\"l3\",";
            case "vlan" -> "\"master\":\"par0\",\"vlanId\":10,\"mtu\":1400,";
            default -> "";
        };
        return """
            {"cniVersion":"1.0.0","name":"kd","type":"%s",%s
             "ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"10.63.0.0/24"}]]}}""".formatted(type, extra, w.dir.resolve("data"));
    }

    private List<String> allocations() throws IOException {
        Path d = w.dir.resolve("data/kd");
        if (!Files.isDirectory(d)) return List.of();
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("10.")).toList();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ipvlan", "vlan", "dummy"})
    void addAnswersTheMissingKernelSupportAndLeavesNothing(String type) throws IOException {
        String c = w.container();
        String hostLinksBefore = NetWorld.in(w.hostName, "ip", "-o", "link").out();
        String conf = conf(type);
        var outcome = w.run(type, w.env("ADD", "c1", c, "eth0"), conf);
        if (outcome.exitCode() == 0) {
            // This kernel has the driver: the plugin must work.
            Map<String, Object> r = Json.parseObject(outcome.stdout());
            assertEquals("eth0", Json.asObject(Json.asList(r.get("interfaces")).get(0)).get("name"));
            assertTrue(NetWorld.in(c, "ip", "-d", "link", "show", "eth0").out().contains(type));
        } else {
            Map<String, Object> e = Json.parseObject(outcome.stdout());
            assertEquals(50L, ((Number) e.get("code")).longValue(), e.toString());
            assertEquals("the kernel has no " + type + " support (RTM_NEWLINK: operation not supported)", e.get("msg"));
            assertTrue(e.get("details").toString().contains("EOPNOTSUPP"), e.toString());
            assertEquals(List.of(), allocations(), "no address allocated");
            assertEquals("1: lo", NetWorld.in(c, "ip", "-o", "link").out().split(":")[0] + ": lo");
            assertEquals(1, NetWorld.in(c, "ip", "-o", "link").out().lines().count(), "only lo in the container");
            assertEquals(hostLinksBefore.lines().count(), NetWorld.in(w.hostName, "ip", "-o", "link").out().lines().count());
        }
        w.ok(type, w.env("DEL", "c1", c, "eth0"), conf);
        w.ok(type, w.env("DEL", "c1", c, "eth0"), conf);
        assertEquals(List.of(), allocations());
        assertNotEquals(0, NetWorld.in(c, "ip", "link", "show", "eth0").rc());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ipvlan", "vlan", "dummy"})
    void configErrorsComeBeforeTheKernel(String type) {
        String c = w.container();
        String bad = switch (type) {
            case "ipvlan" -> conf(type).replace("\"mode\":\"l3\"", "\"mode\":\"l4\"");
            case "vlan" -> conf(type).replace("\"vlanId\":10", "\"vlanId\":4095");
            default -> "{\"cniVersion\":\"1.0.0\",\"name\":\"kd\",\"type\":\"dummy\"}";
        };
        String want = switch (type) {
            case "ipvlan" -> "unknown ipvlan mode: \"l4\"";
            case "vlan" -> "invalid VLAN ID 4095 (must be between 0 and 4095 inclusive)";
            default -> "dummy interface requires an IPAM configuration";
        };
        Map<String, Object> e = w.fails(type, w.env("ADD", "c1", c, "eth0"), bad);
        assertEquals(want, e.get("msg"));
        assertEquals(7L, ((Number) e.get("code")).longValue());
        if (!type.equals("dummy")) {
            e = w.fails(type, w.env("ADD", "c1", c, "eth0"), conf(type).replace("par0", "nosuch0"));
            assertEquals("failed to lookup master \"nosuch0\": Link not found", e.get("msg"));
        }
    }
}
