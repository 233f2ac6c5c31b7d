package io.jcni.plugins.skel;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.PluginRegistry;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SkelTest {

    /** Records what it was asked and returns a fixed result. */
    static final class FakePlugin implements Plugin {
        PluginRequest last;
        RuntimeException toThrow;

        @Override
        public Result add(PluginRequest req) {
            last = req;
            if (toThrow != null) throw toThrow;
            return new Result("1.1.0", List.of(new Result.Interface("eth0", "aa:bb:cc:dd:ee:ff", req.netns())),
                    List.of(new Result.IpConfig(Cidr.parse("10.0.0.2/24"), IpAddr.parse("10.0.0.1"), 0)), List.of(), null);
        }

        @Override
        public void del(PluginRequest req) {
            last = req;
        }

        @Override
        public void check(PluginRequest req) {
            last = req;
        }

        @Override
        public void gc(PluginRequest req) {
            last = req;
        }
    }

    private final FakePlugin fake = new FakePlugin();
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    private Map<String, String> env(String cmd) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", cmd);
        env.put("CNI_CONTAINERID", "abc123");
        env.put("CNI_NETNS", "/var/run/netns/x");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/opt/cni/bin:/usr/lib/cni");
        return env;
    }

    private Skel.Outcome run(Map<String, String> env, String stdin) {
        return Skel.run(() -> fake, env, stdin.getBytes(StandardCharsets.UTF_8), PluginRegistry.context(new PrintStream(log)));
    }

    private static Map<String, Object> json(Skel.Outcome o) {
        return Json.parseObject(o.stdout());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void addAnswersInTheConfigVersion(String version) {
        Skel.Outcome o = run(env("ADD"), "{\"cniVersion\":\"" + version + "\",\"name\":\"n\",\"type\":\"fake\"}");
        assertEquals(0, o.exitCode(), o.stdout());
        assertEquals(version, json(o).get("cniVersion"));
        assertEquals(List.of("/opt/cni/bin", "/usr/lib/cni"), fake.last.path());
    }

    @Test
    void versionListsEverySupportedVersion() {
        Skel.Outcome o = run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"1.0.0\"}");
        assertEquals(0, o.exitCode());
        assertEquals(List.of("0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"), json(o).get("supportedVersions"));
    }

    @Test
    void missingVariablesAreNamed() {
        Map<String, String> env = env("ADD");
        env.remove("CNI_IFNAME");
        env.remove("CNI_NETNS");
        Skel.Outcome o = run(env, "{\"cniVersion\":\"1.0.0\"}");
        assertEquals(1, o.exitCode());
        assertEquals(4L, json(o).get("code"));
        assertEquals("required env variables [CNI_NETNS, CNI_IFNAME] missing", json(o).get("msg"));
    }

    /** Found by the chaos fuzzer through jcnid's frames: Path.of would throw InvalidPathException, a 999 with a trace. */
    @Test
    void netnsWithANulIsABadEnvironment() {
        for (String command : List.of("ADD", "DEL")) {
            Map<String, String> env = env(command);
            env.put("CNI_NETNS", "/var/run/netns/x\0y");
            Skel.Outcome o = run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
            assertEquals(1, o.exitCode(), o.stdout());
            assertEquals(4L, json(o).get("code"));
        }
    }

    @Test
    void delDoesNotNeedANetns() {
        Map<String, String> env = env("DEL");
        env.remove("CNI_NETNS");
        assertEquals(0, run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}").exitCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"eth0/1", "eth:0", "eth 0", "a-very-long-name-16", ".."})
    void badInterfaceNamesAreRejected(String ifname) {
        Map<String, String> env = env("ADD");
        env.put("CNI_IFNAME", ifname);
        Skel.Outcome o = run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        assertEquals(4L, json(o).get("code"), o.stdout());
    }

    @Test
    void badContainerIdIsRejected() {
        Map<String, String> env = env("ADD");
        env.put("CNI_CONTAINERID", "-x;rm");
        assertEquals(4L, json(run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}")).get("code"));
    }

    @Test
    void unsupportedVersionIsCode1AndCheckNeeds040() {
        Skel.Outcome o = run(env("ADD"), "{\"cniVersion\":\"0.5.0\",\"name\":\"n\"}");
        assertEquals(1L, json(o).get("code"));
        assertEquals("incompatible CNI versions", json(o).get("msg"));
        o = run(env("CHECK"), "{\"cniVersion\":\"0.3.1\",\"name\":\"n\"}");
        assertEquals(1L, json(o).get("code"));
        o = run(env("GC"), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        assertEquals("config version does not allow GC", json(o).get("msg"));
    }

    @Test
    void garbageStdinIsDecodingFailure() {
        Skel.Outcome o = run(env("ADD"), "{not json");
        assertEquals(6L, json(o).get("code"));
        assertEquals(6L, json(run(env("ADD"), "")).get("code"));
    }

    @Test
    void unexpectedExceptionsBecomeCode999WithTraceOnStderrOnly() {
        fake.toThrow = new IllegalStateException("boom");
        Skel.Outcome o = run(env("ADD"), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        assertEquals(999L, json(o).get("code"));
        assertEquals("boom", json(o).get("details"));
        assertFalse(o.stdout().contains("at io.jcni"));
        assertTrue(log.toString().contains("IllegalStateException"));
    }

    /** types.NetConf's fields are decoded for every plugin, as every Go plugin does first: wrong types are code 6. */
    @ParameterizedTest
    @ValueSource(strings = {"\"type\":5", "\"Type\":[\"bridge\"]", "\"name\":7", "\"capabilities\":{\"portMappings\":\"yes\"}",
        "\"ipam\":{\"type\":1}", "\"ipam\":\"host-local\"", "\"dns\":{\"nameservers\":\"8.8.8.8\"}", "\"prevResult\":[]"})
    void netConfFieldsOfTheWrongTypeAreRefused(String field) {
        Skel.Outcome o = run(env("ADD"), "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"," + field + "}");
        assertEquals(6L, json(o).get("code"), o.stdout());
        assertNull(fake.last, "the plugin must not run");
    }

    @Test
    void keysFoldAsGoDecodesThem() {
        String conf = """
            {"CNIVersion":"0.4.0","Name":"n","Type":"fake","PrevResult":{"CNIVersion":"0.4.0",
              "IPs":[{"Version":"4","Address":"10.0.0.5/24"}]}}
            """;
        assertEquals(0, run(env("CHECK"), conf).exitCode());
        assertEquals(io.jcni.types.CniVersion.V0_4_0, fake.last.version());
        assertEquals("n", fake.last.networkName());
        assertEquals("10.0.0.5/24", fake.last.prevResult().ips().get(0).address().toString());
    }

    /** Go's ParsePrevResult takes a prevResult without cniVersion to be of the config's version. */
    @Test
    void aPrevResultWithoutVersionHasTheConfigs() {
        String conf = """
            {"cniVersion":"1.0.0","name":"n","prevResult":{"ips":[{"address":"10.0.0.5/24"}]}}
            """;
        assertEquals(0, run(env("DEL"), conf).exitCode(), run(env("DEL"), conf).stdout());
        assertEquals("10.0.0.5/24", fake.last.prevResult().ips().get(0).address().toString());
    }

    @Test
    void prevResultIsConvertedToTheConfigVersion() {
        String conf = """
            {"cniVersion":"1.0.0","name":"n","prevResult":{"cniVersion":"0.3.1",
              "ips":[{"version":"4","address":"10.0.0.5/24"}],"dns":{}}}
            """;
        assertEquals(0, run(env("CHECK"), conf).exitCode());
        assertEquals("1.0.0", fake.last.prevResult().cniVersion());
        assertEquals("10.0.0.5/24", fake.last.prevResult().ips().get(0).address().toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {".jcni-index", "-x", "a\nb", "r\u00e9seau", "a/b", "..", "a b", ""})
    void networkNamesTheReferenceRefusesAreCode7BeforeThePluginRuns(String name) {
        for (String cmd : List.of("ADD", "DEL", "CHECK", "GC", "STATUS")) {
            fake.last = null;
            Skel.Outcome o = run(env(cmd), Json.write(Map.of("cniVersion", "1.1.0", "name", name,
                    "cni.dev/valid-attachments", List.of())));
            assertEquals(7L, json(o).get("code"), cmd + " " + o.stdout());
            assertNull(fake.last, cmd);
        }
    }

    @Test
    void longNamesTheReferenceAcceptsAreAccepted() {
        Map<String, String> env = env("ADD");
        env.put("CNI_CONTAINERID", "c".repeat(4096));
        env.put("CNI_IFNAME", "e-._~!@#$+^&*()");  // 15 bytes of printable ASCII ('%' aside, below)
        Skel.Outcome o = run(env, Json.write(Map.of("cniVersion", "1.1.0", "name", "n".repeat(200) + "_.-9")));
        assertEquals(0, o.exitCode(), o.stdout());
    }

    /** Stricter than the reference: the kernel would expand "%d" in a new link's name. */
    @Test
    void interfaceNamesWithAPercentSignAreCode4BeforeThePluginRuns() {
        Map<String, String> env = env("ADD");
        env.put("CNI_IFNAME", "eth%d");
        fake.last = null;
        Skel.Outcome o = run(env, "{\"cniVersion\":\"1.1.0\",\"name\":\"n\"}");
        assertEquals(4L, json(o).get("code"), o.stdout());
        assertNull(fake.last);
    }

    @Test
    void interfaceNamesAreMeasuredInBytes() {
        Map<String, String> env = env("ADD");
        env.put("CNI_IFNAME", "\u00e9".repeat(8));  // 8 characters, 16 bytes
        Skel.Outcome o = run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}");
        assertEquals(4L, json(o).get("code"), o.stdout());
        env.put("CNI_IFNAME", "\u00e9th0");  // the reference takes it; jcni refuses it whatever the locale
        assertEquals(4L, json(run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}")).get("code"));
        env.put("CNI_IFNAME", "eth\u00010");
        assertEquals(4L, json(run(env, "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}")).get("code"));
    }

    @Test
    void gcWithoutValidAttachmentsIsRefusedBeforeThePluginActs() {
        Skel.Outcome o = run(env("GC"), "{\"cniVersion\":\"1.1.0\",\"name\":\"n\"}");
        assertEquals(7L, json(o).get("code"), o.stdout());
        assertNull(fake.last, "the plugin's GC never ran");

        o = run(env("GC"), "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/valid-attachments\":null}");
        assertEquals(7L, json(o).get("code"), "null is no list either");
        assertNull(fake.last);

        o = run(env("GC"), "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/valid-attachments\":[{\"containerID\":1}]}");
        assertEquals(1, o.exitCode());
        assertNull(fake.last, "a malformed list is refused before the plugin's GC too");

        o = run(env("GC"), "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"cni.dev/valid-attachments\":[]}");
        assertEquals(0, o.exitCode(), o.stdout());
        assertNotNull(fake.last);
    }
}
