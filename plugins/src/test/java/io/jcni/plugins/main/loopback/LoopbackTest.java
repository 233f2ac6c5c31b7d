package io.jcni.plugins.main.loopback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Netns;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Peers;
import io.jcni.testfixtures.Proc;
import io.jcni.types.Json;
import java.nio.file.Path;
import io.jcni.testfixtures.World;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Tag("root")
class LoopbackTest {
    private static final Path REFERENCE = Path.of("/usr/lib/cni/loopback");

    private String name;
    private String path;

    private World world;

    @BeforeEach
    void createNamespace() throws IOException {
        world = new World("jt");
        name = world.host;
        path = World.path(name);
        // The world brings lo up in every namespace it makes; bringing it up is this plugin's job.
        World.ip(name, "link", "set", "lo", "down");
    }

    @AfterEach
    void deleteNamespace() {
        world.close();
    }

    private static String conf(String version) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"lo-net\",\"type\":\"loopback\"}";
    }

    private PluginCall call() {
        return new PluginCall("loopback").env("CNI_NETNS", path).env("CNI_IFNAME", "lo");
    }

    private Map<String, Object> lo() {
        return Json.asObject(Json.asList(Json.parse(exec("ip", "-j", "-n", name, "addr", "show", "dev", "lo"))).getFirst());
    }

    private boolean loUp() {
        return Json.asList(lo().get("flags")).contains("UP");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void addSetsLoUpAndAnswersLikeTheReference(String v) {
        assertFalse(loUp(), "a new namespace starts with lo down");
        Skel.Outcome ours = call().run("ADD", conf(v));
        assertEquals(0, ours.exitCode(), ours.stdout());
        assertTrue(loUp());
        boolean withIpVersion = v.startsWith("0.");
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"%s",
             "interfaces":[{"name":"lo","mac":"00:00:00:00:00:00","sandbox":"%s"}],
             "ips":[{%s"interface":0,"address":"127.0.0.1/8"},{%s"interface":0,"address":"::1/128"}],
             "dns":{}}
            """.formatted(v, path, withIpVersion ? "\"version\":\"4\"," : "", withIpVersion ? "\"version\":\"6\"," : ""))),
                Json.write(Json.parse(ours.stdout())));

        // The reference plugin (1.1.1 speaks up to 1.0.0) prints the very same text, except that it
        // labels its 1.0.0-layout result with the older version (ips without "version") below 1.0.0.
        Peers.requireExecutable(REFERENCE, "containernetworking-plugins");
        String refVersion = v.equals("1.1.0") ? "1.0.0" : v;
        String ref = runReference("ADD", conf(refVersion)).replace("\"cniVersion\": \"" + refVersion + "\"", "\"cniVersion\": \"" + v + "\"");
        if (!withIpVersion) {
            assertEquals(ref, ours.stdout());
        } else {
            Map<String, Object> refJson = Json.parseObject(ref);
            for (Object ip : Json.asList(refJson.get("ips"))) {
                Map<String, Object> m = Json.asObject(ip);
                Map<String, Object> fixed = new java.util.LinkedHashMap<>();
                fixed.put("version", ((String) m.get("address")).contains(":") ? "6" : "4");
                fixed.putAll(m);
                m.clear();
                m.putAll(fixed);
            }
            assertEquals(Json.writePretty(refJson), ours.stdout());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0"})
    void legacyVersionsGetTheLegacyResultFormat(String v) {
        Map<String, Object> r = call().ok("ADD", conf(v));
        assertTrue(loUp());
        // Upstream prints the 0.3+ layout under a 0.x version label here; we print what 0.1/0.2 define.
        assertEquals("{\"cniVersion\":\"" + v + "\",\"ip4\":{\"ip\":\"127.0.0.1/8\"},\"ip6\":{\"ip\":\"::1/128\"},\"dns\":{}}",
                Json.write(r));
        call().ok("DEL", conf(v));
        assertFalse(loUp());
    }

    @Test
    void chainedAfterAnotherPluginPassesItsResultThrough() {
        String prev = "{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\",\"sandbox\":\"" + path
                + "\"}],\"ips\":[{\"interface\":0,\"address\":\"10.1.0.2/24\"}],\"dns\":{}}";
        String c = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"loopback\",\"prevResult\":" + prev + "}";
        Map<String, Object> r = call().ok("ADD", c);
        assertEquals(Json.write(Json.parse(prev)), Json.write(r));
        assertTrue(loUp());
    }

    @Test
    void delSetsLoDownAndCheckNoticesIt() {
        call().ok("ADD", conf("1.0.0"));
        call().ok("CHECK", conf("1.0.0"));
        call().ok("DEL", conf("1.0.0"));
        assertFalse(loUp());
        Map<String, Object> e = call().fails("CHECK", conf("1.0.0"));
        assertEquals("loopback interface is down", e.get("msg"));
        assertEquals(999L, e.get("code"));
        call().ok("DEL", conf("1.0.0"));
    }

    @Test
    void delSucceedsWhenTheNamespaceIsGone() {
        call().ok("ADD", conf("1.0.0"));
        Netns.delete(name);
        call().ok("DEL", conf("1.0.0"));
        call().env("CNI_NETNS", null).ok("DEL", conf("1.0.0"));
        Map<String, Object> e = call().fails("ADD", conf("1.0.0"));
        // The reference's words (ns.GetNS), as /usr/lib/cni/bridge answers; its loopback and tuning say only the part after the first colon.
        assertEquals("failed to open netns \"" + path + "\": failed to Statfs \"" + path + "\": no such file or directory", e.get("msg"));
    }

    @Test
    void aNonLoopbackAddressOnLoIsRefused() {
        exec("ip", "-n", name, "addr", "add", "10.99.0.1/32", "dev", "lo");
        Map<String, Object> e = call().fails("ADD", conf("1.0.0"));
        assertEquals("loopback interface found with non-loopback address \"10.99.0.1\"", e.get("msg"));
    }

    @Test
    void ifnameIsIgnored() {
        Map<String, Object> r = call().env("CNI_IFNAME", "eth0").ok("ADD", conf("1.0.0"));
        assertEquals("lo", Json.asObject(Json.asList(r.get("interfaces")).getFirst()).get("name"));
        assertTrue(loUp());
    }

    private String runReference(String cmd, String stdin) {
        List<String> argv = List.of(REFERENCE.toString());
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().putAll(Map.of("CNI_COMMAND", cmd, "CNI_CONTAINERID", "x", "CNI_NETNS", path,
                "CNI_IFNAME", "lo", "CNI_PATH", "/usr/lib/cni"));
        pb.redirectErrorStream(false);
        return run(pb, stdin);
    }

    static String exec(String... cmd) {
        return Proc.ok(cmd);
    }

    private static String run(ProcessBuilder pb, String stdin) {
        return Proc.run(pb, stdin, 20).ok(pb.command());
    }
}
