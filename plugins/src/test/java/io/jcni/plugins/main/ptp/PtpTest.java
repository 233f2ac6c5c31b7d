package io.jcni.plugins.main.ptp;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.Sysctl;
import io.jcni.plugins.testutil.NetWorld;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The ptp plugin in real namespaces: routed veth pairs from a private "host" netns. */
@Tag("root")
class PtpTest {
    private NetWorld w;

    @BeforeEach
    void setUp() throws Exception {
        w = NetWorld.create();
        w.jcniLauncher("static");
    }

    @AfterEach
    void tearDown() {
        if (w != null) w.close();
    }

    static String staticConf(String version, String address, String extra) {
        return """
            {"cniVersion":"%s","name":"pnet","type":"ptp"%s,
             "ipam":{"type":"static","addresses":[{"address":"%s","gateway":"10.52.0.1"}],"routes":[{"dst":"0.0.0.0/0"}]}}
            """.formatted(version, extra, address);
    }

    String hostLocalConf(String version, String dataDir, String extra) {
        return """
            {"cniVersion":"%s","name":"pnet","type":"ptp","mtu":1400%s,
             "ipam":{"type":"host-local","dataDir":"%s","ranges":[[{"subnet":"10.53.0.0/24"}],[{"subnet":"fd53::/64"}]],
                     "routes":[{"dst":"0.0.0.0/0"}]}}
            """.formatted(version, extra, w.dir.resolve(dataDir));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void hostAndContainersReachEachOther(String version) {
        String c1 = w.container();
        String c2 = w.container();
        String conf1 = staticConf(version, "10.52.0.2/24", "");
        String conf2 = staticConf(version, "10.52.0.3/24", "");
        Map<String, Object> r = w.ok("ptp", w.env("ADD", "c1", c1, "eth0"), conf1);
        w.ok("ptp", w.env("ADD", "c2", c2, "eth0"), conf2);

        assertEquals(version, r.get("cniVersion"));
        List<Object> ifs = Json.asList(r.get("interfaces"));
        assertEquals(2, ifs.size());
        assertTrue(((String) Json.asObject(ifs.get(0)).get("name")).matches("veth[0-9a-f]{8}"));
        assertEquals(c1, Json.asObject(ifs.get(1)).get("sandbox"));
        assertEquals(1L, ((Number) Json.asObject(Json.asList(r.get("ips")).get(0)).get("interface")).longValue());

        assertTrue(NetWorld.ping(w.hostName, "10.52.0.2"), "host -> c1");
        assertTrue(NetWorld.ping(c1, "10.52.0.1"), "c1 -> its gateway on the host");
        assertTrue(NetWorld.ping(c1, "10.52.0.3"), "c1 -> c2, routed by the host");
        assertEquals("1", w.host.run(() -> Sysctl.get("net/ipv4/ip_forward")));
        String routes = NetWorld.in(c1, "ip", "-4", "route").out();
        assertTrue(routes.contains("10.52.0.0/24 via 10.52.0.1 dev eth0 src 10.52.0.2"), routes);
        assertTrue(routes.contains("10.52.0.1 dev eth0 scope link src 10.52.0.2"), routes);
        assertTrue(routes.contains("default via 10.52.0.1 dev eth0"), routes);

        for (int i = 0; i < 2; i++) {
            w.ok("ptp", w.env("DEL", "c1", c1, "eth0"), conf1);
            w.ok("ptp", w.env("DEL", "c2", c2, "eth0"), conf2);
        }
        assertNotEquals(0, NetWorld.in(c1, "ip", "link", "show", "eth0").rc());
        assertFalse(NetWorld.in(w.hostName, "ip", "-o", "link", "show", "type", "veth").out().contains("veth"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0"})
    void resultMatchesTheReferencePlugin(String version) throws Exception {
        String c = w.container();
        String refConf = hostLocalConf(version, "ref", "");
        String ref = w.reference("ptp", w.env("ADD", "c1", c, "eth0"), refConf);
        String refRoutes = NetWorld.in(c, "ip", "route").out() + NetWorld.in(c, "ip", "-6", "route").out();
        String refHost = NetWorld.in(w.hostName, "ip", "route").out().replaceAll("veth[0-9a-f]{8}", "VETH");
        w.reference("ptp", w.env("DEL", "c1", c, "eth0"), refConf);
        String ourConf = hostLocalConf(version, "ours", "");
        Map<String, Object> ours = w.ok("ptp", w.env("ADD", "c1", c, "eth0"), ourConf);
        assertEquals(NetWorld.normalize(Json.parseObject(ref)), NetWorld.normalize(ours));
        assertEquals(refRoutes, NetWorld.in(c, "ip", "route").out() + NetWorld.in(c, "ip", "-6", "route").out());
        assertEquals(refHost, NetWorld.in(w.hostName, "ip", "route").out().replaceAll("veth[0-9a-f]{8}", "VETH"));
        assertTrue(NetWorld.in(c, "ip", "link", "show", "eth0").out().contains("mtu 1400"));
        assertTrue(NetWorld.ping(w.hostName, "10.53.0.2"));
        w.ok("ptp", w.env("DEL", "c1", c, "eth0"), ourConf);
    }

    @Test
    void delSucceedsWhenTheNetnsIsGoneAndReleasesTheAddress() throws Exception {
        String c = w.container();
        String conf = hostLocalConf("1.0.0", "data", "");
        w.ok("ptp", w.env("ADD", "c1", c, "eth0"), conf);
        assertTrue(Files.exists(w.dir.resolve("data/pnet/10.53.0.2")));
        w.deleteContainer(c);
        w.ok("ptp", w.env("DEL", "c1", c, "eth0"), conf);
        w.ok("ptp", w.env("DEL", "c1", c, "eth0"), conf);
        assertFalse(Files.exists(w.dir.resolve("data/pnet/10.53.0.2")));
    }

    @Test
    void checkPassesAfterAddAndFailsWithoutTheAddress() {
        String c = w.container();
        String conf = staticConf("1.0.0", "10.52.0.2/24", "");
        Map<String, Object> r = w.ok("ptp", w.env("ADD", "c1", c, "eth0"), conf);
        Map<String, Object> m = new HashMap<>(Json.parseObject(conf));
        m.put("prevResult", r);
        String withPrev = Json.write(m);
        w.ok("ptp", w.env("CHECK", "c1", c, "eth0"), withPrev);
        assertEquals(0, NetWorld.in(c, "ip", "addr", "del", "10.52.0.2/24", "dev", "eth0").rc());
        Map<String, Object> err = w.fails("ptp", w.env("CHECK", "c1", c, "eth0"), withPrev);
        assertTrue(err.get("msg").toString().contains("10.52.0.2/24"), err.toString());
        w.ok("ptp", w.env("DEL", "c1", c, "eth0"), conf);
    }

    @Test
    void dnsFromTheConfigReplacesTheIpams() {
        String c = w.container();
        String conf = staticConf("1.0.0", "10.52.0.2/24", ",\"dns\":{\"nameservers\":[\"9.9.9.9\"],\"search\":[\"x.local\"]}");
        Map<String, Object> r = w.ok("ptp", w.env("ADD", "c1", c, "eth0"), conf);
        assertEquals(Map.of("nameservers", List.of("9.9.9.9"), "search", List.of("x.local")), r.get("dns"));
        w.ok("ptp", w.env("DEL", "c1", c, "eth0"), conf);
    }

    @Test
    void badConfigsNameTheKeyAndLeaveNothingBehind() {
        String c = w.container();
        Map<String, Object> e = w.fails("ptp", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.52.0.2/24", ",\"ipMasq\":7"));
        assertEquals(6L, ((Number) e.get("code")).longValue());
        assertTrue(e.toString().contains("ipMasq"), e.toString());
        e = w.fails("ptp", w.env("ADD", "c1", c, "eth0"), staticConf("1.0.0", "10.52.0.2/24", ",\"mtu\":true"));
        assertTrue(e.get("msg").toString().contains("mtu"), e.toString());
        e = w.fails("ptp", w.env("ADD", "c1", c, "eth0"), "{\"cniVersion\":\"1.0.0\",\"name\":\"p\",\"type\":\"ptp\"}");
        assertTrue(e.toString().contains("ipam"), e.toString());
        assertNotEquals(0, NetWorld.in(c, "ip", "link", "show", "eth0").rc());
    }
}
