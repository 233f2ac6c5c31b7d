package io.jcni.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI in-process, with fake plugins (shell scripts); needs no privileges. */
class MainTest {

    @TempDir
    Path tmp;

    Path bin;
    Path conf;
    Path cache;
    Path log;
    final Map<String, String> env = new HashMap<>();
    String out;
    String err;

    @BeforeEach
    void setUp() throws IOException {
        bin = Files.createDirectories(tmp.resolve("bin"));
        conf = Files.createDirectories(tmp.resolve("net.d"));
        cache = tmp.resolve("cache");
        log = Files.createDirectories(tmp.resolve("log"));
        env.put("PATH", System.getenv("PATH"));
        env.put("NETCONFPATH", conf.toString());
        env.put("CNI_PATH", "/nonexistent:" + bin);
        env.put("JCNI_CACHE_DIR", cache.toString());
        // A plugin that logs its stdin and CNI env, answers VERSION, and echoes prevResult or a fixed result.
        plugin("fake", """
                in=$(cat)
                printf '%s' "$in" > LOG/$(basename $0)-$CNI_COMMAND.json
                env | grep '^CNI_' | sort > LOG/$(basename $0)-$CNI_COMMAND.env
                case "$CNI_COMMAND" in
                  VERSION) echo '{"cniVersion":"1.1.0","supportedVersions":["0.4.0","1.0.0","1.1.0"]}' ;;
                  ADD) echo '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"'"$CNI_NETNS"'"}],"ips":[{"interface":0,"address":"10.7.0.2/24","gateway":"10.7.0.1"}]}' ;;
                esac""");
        plugin("failing", """
                cat > /dev/null
                [ "$CNI_COMMAND" = VERSION ] && { echo '{"cniVersion":"1.0.0","supportedVersions":["1.0.0"]}'; exit 0; }
                echo '{"cniVersion":"1.0.0","code":11,"msg":"try again later","details":"the datastore is locked"}'
                exit 1""");
    }

    private void plugin(String name, String body) throws IOException {
        Path p = bin.resolve(name);
        Files.writeString(p, "#!/bin/sh\n" + body.replace("LOG", log.toString()) + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private void network(String file, String json) throws IOException {
        Files.writeString(conf.resolve(file), json);
    }

    private int jcni(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = new Main(env, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8)).run(args);
        out = o.toString(StandardCharsets.UTF_8);
        err = e.toString(StandardCharsets.UTF_8);
        return rc;
    }

    @Test
    void anEmptyCniPathSaysWhereToPointIt() throws IOException {
        network("10-n.conflist", """
                {"cniVersion":"1.0.0","name":"n","plugins":[{"type":"fake"}]}""");
        env.remove("CNI_PATH");
        assertEquals(1, jcni("add", "n", "/var/run/netns/test"));
        assertTrue(err.contains("CNI_PATH is empty; set it to the directory holding the plugins, e.g. CNI_PATH=/opt/cni/bin"), err);
    }

    @Test
    void containerIdIsCnitools() {
        // printf '%s' /var/run/netns/test | sha512sum | cut -c1-20
        assertEquals("cnitool-7b8a61d5d8e94d07cbe4", Main.containerId("/var/run/netns/test"));
        assertEquals("/var/run/netns/test", Main.absolute("/var/run/netns/../netns/./test"));
        assertEquals(Path.of("").toAbsolutePath().resolve("ns1").toString(), Main.absolute("ns1"));
    }

    @Test
    void helpAndUsageErrors() {
        assertEquals(0, jcni("--help"));
        assertTrue(out.contains("Usage: jcni") && out.contains("validate"), out);
        assertEquals(0, jcni("add", "--help"));
        assertTrue(out.contains("jcni add <net> <netns>"), out);
        assertEquals(0, jcni("help", "gc"));
        assertTrue(out.contains("--valid"), out);
        assertEquals(2, jcni());
        assertTrue(err.contains("Usage"), err);
        assertEquals(2, jcni("frobnicate"));
        assertTrue(err.contains("unknown command \"frobnicate\""), err);
        assertEquals(2, jcni("add", "onlyone"));
        assertTrue(err.contains("expected <net> <netns>"), err);
        assertEquals(2, jcni("list", "--bogus"));
        assertEquals(2, jcni("add", "n", "/x", "--timeout", "soon"));
        assertEquals(2, jcni("gc", "n", "--valid", "noslash"));
        assertEquals(2, jcni("gc", "n", "--valid", "../x/eth0"));
        assertEquals(2, jcni("gc", "n", "--valid", "c1/eth 0"));
    }

    @Test
    void addPrintsTheResultCachesItAndDelRemovesIt() throws IOException {
        network("10-n.conflist", """
                {"cniVersion":"1.0.0","name":"n","plugins":[{"type":"fake","capabilities":{"portMappings":true}}]}""");
        env.put("CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=web");
        env.put("CAP_ARGS", "{\"portMappings\":[{\"hostPort\":8080,\"containerPort\":80}],\"bandwidth\":{}}");
        env.put("CNI_IFNAME", "net0");
        assertEquals(0, jcni("add", "n", "/var/run/netns/test"), err);
        Map<String, Object> r = Json.parseObject(out);
        assertEquals("1.0.0", r.get("cniVersion"));
        assertTrue(out.contains("\n    \"ips\": ["), "printed indented like cnitool: " + out);

        Map<String, Object> stdin = Json.parseObject(Files.readString(log.resolve("fake-ADD.json")));
        assertEquals(Map.of("portMappings", List.of(Map.of("hostPort", 8080L, "containerPort", 80L))), stdin.get("runtimeConfig"));
        List<String> cniEnv = Files.readAllLines(log.resolve("fake-ADD.env"));
        assertEquals(List.of("CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAME=web", "CNI_COMMAND=ADD", "CNI_CONTAINERID=cnitool-7b8a61d5d8e94d07cbe4",
                "CNI_IFNAME=net0", "CNI_NETNS=/var/run/netns/test", "CNI_PATH=/nonexistent:" + bin), cniEnv);
        Path cached = cache.resolve("results/n-cnitool-7b8a61d5d8e94d07cbe4-net0");
        assertTrue(Files.exists(cached));

        assertEquals(0, jcni("list"));
        assertTrue(out.contains("cnitool-7b8a61d5d8e94d07cbe4"), out);

        assertEquals(0, jcni("check", "n", "/var/run/netns/test"), err);
        assertEquals(Json.parseObject(Files.readString(cached)).get("result"),
                Json.parseObject(Files.readString(log.resolve("fake-CHECK.json"))).get("prevResult"));

        assertEquals(0, jcni("del", "n", "/var/run/netns/test"), err);
        assertFalse(Files.exists(cached));
        assertTrue(Files.readString(log.resolve("fake-DEL.json")).contains("prevResult"));
    }

    @Test
    void pluginErrorsArePrintedWithCodeAndMessage() throws IOException {
        network("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"fake\"},{\"type\":\"failing\"}]}");
        assertEquals(1, jcni("add", "n", "/var/run/netns/test"));
        assertEquals("", out);
        assertTrue(err.contains("failing") && err.contains("11") && err.contains("try again later") && err.contains("the datastore is locked"), err);
    }

    @Test
    void configErrorsNameTheFile() throws IOException {
        network("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"mtu\":1}]}");
        assertEquals(1, jcni("add", "n", "/x"));
        assertTrue(err.contains("10-n.conflist") && err.contains("type"), err);
        assertEquals(1, jcni("del", "other", "/x"));
        assertTrue(err.contains("no net configuration with name \"other\""), err);
    }

    @Test
    void listShowsNetworksAndSkippedFiles() throws IOException {
        network("10-n.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"fake\"},{\"type\":\"failing\"}]}");
        network("20-dup.conf", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"fake\"}");
        network("30-broken.json", "{");
        assertEquals(0, jcni("list"));
        assertTrue(out.contains("fake,failing"), out);
        assertTrue(out.contains("20-dup.conf: network \"n\" is already defined in"), out);
        assertTrue(out.contains("30-broken.json:"), out);
    }

    @Test
    void validateAndVersion() throws IOException {
        network("10-n.conflist", "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"fake\",\"capabilities\":{\"mac\":true}}]}");
        network("20-m.conflist", "{\"cniVersion\":\"1.1.0\",\"name\":\"m\",\"plugins\":[{\"type\":\"failing\"},{\"type\":\"absent\"}]}");
        assertEquals(0, jcni("validate", "n"), err);
        assertTrue(out.contains("is valid") && out.contains("[mac]"), out);
        env.put("CAP_ARGS", "{\"portMappings\":[]}");
        assertEquals(1, jcni("validate", "n"));
        assertTrue(err.contains("capability \"portMappings\""), err);
        env.remove("CAP_ARGS");
        assertEquals(1, jcni("validate", "m"));
        assertTrue(err.contains("\"failing\" does not support config version \"1.1.0\"") && err.contains("absent"), err);

        assertEquals(0, jcni("version"));
        assertTrue(out.contains("0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0"), out);
        assertEquals(0, jcni("version", "fake"));
        assertEquals(List.of("0.4.0", "1.0.0", "1.1.0"), Json.parseObject(out).get("supportedVersions"));
    }

    @Test
    void gcKeepsValidAttachmentsAndStatusRuns() throws IOException {
        network("10-n.conflist", "{\"cniVersion\":\"1.1.0\",\"name\":\"n\",\"plugins\":[{\"type\":\"fake\"}]}");
        assertEquals(0, jcni("add", "n", "/var/run/netns/a"), err);
        assertEquals(0, jcni("add", "n", "/var/run/netns/b"), err);
        String a = Main.containerId("/var/run/netns/a");
        String b = Main.containerId("/var/run/netns/b");
        assertEquals(0, jcni("gc", "n", "--valid", a + "/eth0"), err);
        assertTrue(Files.exists(cache.resolve("results/n-" + a + "-eth0")));
        assertFalse(Files.exists(cache.resolve("results/n-" + b + "-eth0")));
        Map<String, Object> gc = Json.parseObject(Files.readString(log.resolve("fake-GC.json")));
        assertEquals(List.of(Map.of("containerID", a, "ifname", "eth0")), gc.get("cni.dev/valid-attachments"));
        Files.deleteIfExists(log.resolve("fake-GC.json"));
        assertEquals(2, jcni("gc", "n", "/var/run/netns/ignored"), "without --valid nothing is collected");
        assertTrue(err.contains("--valid none"), err);
        assertTrue(Files.exists(cache.resolve("results/n-" + a + "-eth0")));
        assertFalse(Files.exists(log.resolve("fake-GC.json")), "and no plugin got GC");
        assertEquals(0, jcni("gc", "n", "/var/run/netns/ignored", "--valid", "none"), err);
        assertFalse(Files.exists(cache.resolve("results/n-" + a + "-eth0")));
        assertEquals(List.of(), Json.parseObject(Files.readString(log.resolve("fake-GC.json"))).get("cni.dev/valid-attachments"));
        assertEquals(0, jcni("status", "n"), err);
        assertTrue(Files.exists(log.resolve("fake-STATUS.json")));
    }

    @Test
    void timeoutOptionKillsAHangingPlugin() throws IOException {
        plugin("hang", "exec sleep 300");
        network("10-h.conflist", "{\"cniVersion\":\"1.0.0\",\"name\":\"h\",\"plugins\":[{\"type\":\"hang\"}]}");
        assertEquals(1, jcni("add", "h", "/x", "--timeout", "300ms"));
        assertTrue(err.contains("timed out"), err);
        assertThrows(Main.UsageException.class, () -> Main.parseDuration("0", "t"));
        assertEquals(1500, Main.parseDuration("1.5", "t").toMillis());
        assertEquals(120_000, Main.parseDuration("2m", "t").toMillis());
    }
}
