package io.jcni.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import io.jcni.types.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CniTest {

    @TempDir
    Path cacheDir;

    FakeExec exec;
    Cni cni;

    static final String RESULT_100 = """
            {"cniVersion":"1.0.0","interfaces":[{"name":"eth0","mac":"aa:bb:cc:dd:ee:ff","sandbox":"/run/netns/x"}],
             "ips":[{"interface":0,"address":"10.1.0.5/24","gateway":"10.1.0.1"}],"dns":{}}""";

    @BeforeEach
    void setUp() {
        exec = new FakeExec();
        cni = new Cni(List.of(Path.of("/opt/cni/bin"), Path.of("/usr/lib/cni")), cacheDir, exec);
    }

    static NetConfList list(String version, String pluginsJson) {
        return NetConfList.parse("{\"cniVersion\":\"" + version + "\",\"name\":\"net1\",\"plugins\":" + pluginsJson + "}", "test");
    }

    static RuntimeConf rt(Map<String, Object> caps) {
        return new RuntimeConf("ctr1", "/run/netns/x", "eth0", List.of(Map.entry("K8S_POD_NAME", "p"), Map.entry("IgnoreUnknown", "1")), caps);
    }

    // ------------------------------------------------------------------ buildConfig

    @Test
    void buildConfigInjectsNameVersionAndOnlyDeclaredCapabilities() {
        PluginConf p = PluginConf.parse(Json.parseObject("""
                {"type":"portmap","name":"ignored","cniVersion":"0.1.0","snat":true,
                 "capabilities":{"portMappings":true,"bandwidth":false,"ips":true},
                 "runtimeConfig":{"stale":1}}"""), "p");
        Map<String, Object> caps = Map.of("portMappings", List.of(Map.of("hostPort", 80L)), "bandwidth", Map.of("rate", 1L),
                "mac", "aa:bb:cc:dd:ee:ff");
        Map<String, Object> c = Cni.buildConfig("net1", "1.0.0", p, null, rt(caps));
        assertEquals("net1", c.get("name"));
        assertEquals("1.0.0", c.get("cniVersion"));
        assertEquals(true, c.get("snat"));
        assertFalse(c.containsKey("prevResult"));
        assertEquals(Map.of("portMappings", List.of(Map.of("hostPort", 80L))), c.get("runtimeConfig"),
                "bandwidth is declared false, mac is not declared, ips has no arg");
        // the plugin's own object is untouched
        assertEquals("ignored", p.raw().get("name"));
    }

    @Test
    void buildConfigWithoutMatchingCapabilitiesKeepsThePluginsOwnRuntimeConfig() {
        PluginConf p = PluginConf.parse(Json.parseObject("{\"type\":\"x\",\"runtimeConfig\":{\"a\":1}}"), "p");
        Map<String, Object> c = Cni.buildConfig("n", "1.0.0", p, null, rt(Map.of("portMappings", List.of())));
        assertEquals(Map.of("a", 1L), c.get("runtimeConfig"));
        assertNull(Cni.buildConfig("n", "1.0.0", PluginConf.parse(Json.parseObject("{\"type\":\"x\"}"), "p"), null, null)
                .get("runtimeConfig"));
    }

    // ------------------------------------------------------------------ ADD

    @Test
    void addRunsPluginsInOrderPassingConvertedPrevResultAndCaches() {
        NetConfList l = list("0.4.0", """
                [{"type":"bridge","capabilities":{"mac":true}},{"type":"tuning"},{"type":"portmap","capabilities":{"portMappings":true}}]""");
        exec.answer = c -> switch (c.plugin()) {
            case "bridge" -> RESULT_100;              // a plugin answering in a newer version than the list
            default -> Json.write(c.stdin().get("prevResult"));
        };
        Map<String, Object> caps = Map.of("portMappings", List.of(Map.of("hostPort", 8080L, "containerPort", 80L)), "mac", "aa:bb:cc:dd:ee:ff");
        Result r = cni.addNetworkList(l, rt(caps));

        assertEquals(List.of("bridge:ADD", "tuning:ADD", "portmap:ADD"), exec.commands());
        assertEquals("0.4.0", r.cniVersion());
        assertEquals("10.1.0.5/24", r.ips().getFirst().address().toString());

        FakeExec.Call tuning = exec.calls.get(1);
        Map<String, Object> prev = Json.asObject(tuning.stdin().get("prevResult"));
        assertEquals("0.4.0", prev.get("cniVersion"), "prevResult is converted to the list's version");
        assertEquals("4", Json.asObject(Json.asList(prev.get("ips")).getFirst()).get("version"), "0.4.0 results carry ips[].version");
        assertNull(exec.calls.get(0).stdin().get("prevResult"));
        assertEquals(Map.of("mac", "aa:bb:cc:dd:ee:ff"), exec.calls.get(0).stdin().get("runtimeConfig"));
        assertNull(tuning.stdin().get("runtimeConfig"));
        assertEquals(Map.of("portMappings", caps.get("portMappings")), exec.calls.get(2).stdin().get("runtimeConfig"));

        CniEnvironment env = exec.calls.getFirst().env();
        assertEquals(new CniEnvironment("ADD", "ctr1", "/run/netns/x", "eth0", "K8S_POD_NAME=p;IgnoreUnknown=1", "/opt/cni/bin:/usr/lib/cni"), env);

        CacheEntry e = cni.cache().get("net1", "ctr1", "eth0").orElseThrow();
        assertEquals("0.4.0", e.result().get("cniVersion"));
        assertEquals(caps, e.capabilityArgs());
        assertEquals(l.raw(), Json.parseObject(new String(e.config())));
        assertEquals("/run/netns/x", e.netns());
        assertEquals(rt(caps).args(), e.cniArgs());
    }

    @Test
    void addResultWithoutVersionTakesTheConfigsVersion() {
        NetConfList l = list("1.0.0", "[{\"type\":\"p\"}]");
        exec.answer = c -> "{\"ips\":[{\"address\":\"10.0.0.2/8\"}]}";
        assertEquals("1.0.0", cni.addNetworkList(l, rt(Map.of())).cniVersion());
    }

    @Test
    void addGarbageResultNamesThePlugin() {
        NetConfList l = list("1.0.0", "[{\"type\":\"noisy\"}]");
        exec.answer = c -> "hello, world";
        CniException e = assertThrows(CniException.class, () -> cni.addNetworkList(l, rt(Map.of())));
        assertTrue(e.getMessage().contains("noisy"), e.getMessage());
        assertEquals(6, e.code());
        assertFalse(Files.exists(cni.cache().file("net1", "ctr1", "eth0")));
    }

    @Test
    void addStopsAtTheFirstFailureWithThePluginsError() {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"},{\"type\":\"b\"},{\"type\":\"c\"}]");
        exec.answer = c -> {
            if (c.plugin().equals("b")) throw new PluginException("b", "", 7, "bad config", "mtu too large", "");
            return RESULT_100;
        };
        PluginException e = assertThrows(PluginException.class, () -> cni.addNetworkList(l, rt(Map.of())));
        assertEquals(7, e.code());
        assertEquals("bad config", e.msg());
        assertEquals("mtu too large", e.details());
        assertTrue(e.getMessage().contains("type=\"b\" (add)"), e.getMessage());
        assertEquals(List.of("a:ADD", "b:ADD"), exec.commands());
    }

    @Test
    void addValidatesContainerIdAndIfName() {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"}]");
        assertThrows(CniException.class, () -> cni.addNetworkList(l, new RuntimeConf("-bad", "/x", "eth0")));
        assertThrows(CniException.class, () -> cni.addNetworkList(l, new RuntimeConf("ok", "/x", "a/b")));
        assertThrows(CniException.class, () -> cni.addNetworkList(l, new RuntimeConf("ok", "/x", "0123456789abcdef")));
        assertTrue(exec.calls.isEmpty());
    }

    @Test
    void missingPluginIsNamed() {
        NetConfList l = list("1.0.0", "[{\"type\":\"missing-plugin\"}]");
        CniException e = assertThrows(CniException.class, () -> cni.addNetworkList(l, rt(Map.of())));
        assertTrue(e.getMessage().contains("missing-plugin"), e.getMessage());
        assertTrue(e.getMessage().contains("/opt/cni/bin"), e.getMessage());
    }

    // ------------------------------------------------------------------ DEL / CHECK

    @Test
    void delRunsInReverseWithCachedResultAndRemovesTheCache() {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"},{\"type\":\"b\",\"capabilities\":{\"x\":true}}]");
        exec.answer = c -> c.env().command().equals("ADD") ? RESULT_100 : "";
        cni.addNetworkList(l, rt(Map.of("x", 1L)));
        exec.calls.clear();
        cni.delNetworkList(l, rt(Map.of("x", 1L)));
        assertEquals(List.of("b:DEL", "a:DEL"), exec.commands());
        assertEquals("10.1.0.5/24", Json.asObject(Json.asList(Json.asObject(exec.calls.getFirst().stdin().get("prevResult")).get("ips")).getFirst()).get("address"));
        assertEquals(Map.of("x", 1L), exec.calls.getFirst().stdin().get("runtimeConfig"));
        assertFalse(Files.exists(cni.cache().file("net1", "ctr1", "eth0")));
        // DEL again is fine: no cache, no prevResult
        exec.calls.clear();
        cni.delNetworkList(l, rt(Map.of()));
        assertNull(exec.calls.getFirst().stdin().get("prevResult"));
    }

    @Test
    void delBefore040SendsNoPrevResult() {
        NetConfList l = list("0.3.1", "[{\"type\":\"a\"}]");
        exec.answer = c -> c.env().command().equals("ADD") ? RESULT_100 : "";
        cni.addNetworkList(l, rt(Map.of()));
        exec.calls.clear();
        cni.delNetworkList(l, rt(Map.of()));
        assertNull(exec.calls.getFirst().stdin().get("prevResult"));
    }

    @Test
    void delWithCorruptCacheGoesOnWithoutIt() throws Exception {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"}]");
        Path f = cni.cache().file("net1", "ctr1", "eth0");
        Files.createDirectories(f.getParent());
        Files.writeString(f, "{corrupt");
        cni.delNetworkList(l, rt(Map.of()));
        assertNull(exec.calls.getFirst().stdin().get("prevResult"));
        assertFalse(Files.exists(f));
    }

    @Test
    void checkUsesCachedResultAndHonoursDisableCheck() {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"},{\"type\":\"b\"}]");
        CniException none = assertThrows(CniException.class, () -> cni.checkNetworkList(l, rt(Map.of())));
        assertTrue(none.getMessage().contains("no cached result"), none.getMessage());
        exec.answer = c -> c.env().command().equals("ADD") ? RESULT_100 : "";
        cni.addNetworkList(l, rt(Map.of()));
        exec.calls.clear();
        cni.checkNetworkList(l, rt(Map.of()));
        assertEquals(List.of("a:CHECK", "b:CHECK"), exec.commands());
        assertEquals("1.0.0", Json.asObject(exec.calls.getFirst().stdin().get("prevResult")).get("cniVersion"));

        exec.calls.clear();
        NetConfList disabled = NetConfList.parse("{\"cniVersion\":\"1.0.0\",\"name\":\"net1\",\"disableCheck\":true,\"plugins\":[{\"type\":\"a\"}]}", "t");
        cni.checkNetworkList(disabled, rt(Map.of()));
        assertTrue(exec.calls.isEmpty());
    }

    @Test
    void checkIsRefusedBefore040() {
        CniException e = assertThrows(CniException.class, () -> cni.checkNetworkList(list("0.3.1", "[{\"type\":\"a\"}]"), rt(Map.of())));
        assertTrue(e.getMessage().contains("does not support the CHECK command"), e.getMessage());
    }

    // ------------------------------------------------------------------ GC / STATUS

    private void addAttachment(NetConfList l, String ctr, String ifname) {
        exec.answer = c -> RESULT_100;
        cni.addNetworkList(l, new RuntimeConf(ctr, "/run/netns/" + ctr, ifname, List.of(Map.entry("A", ctr)), Map.of("c", ctr)));
    }

    @Test
    void gcDeletesStaleAttachmentsAndSendsValidOnesToPlugins() {
        NetConfList l = list("1.1.0", "[{\"type\":\"a\",\"capabilities\":{\"c\":true}},{\"type\":\"b\"}]");
        NetConfList other = NetConfList.parse("{\"cniVersion\":\"1.1.0\",\"name\":\"other\",\"plugins\":[{\"type\":\"z\"}]}", "t");
        addAttachment(l, "keep", "eth0");
        addAttachment(l, "stale", "eth0");
        addAttachment(other, "stale", "eth0");
        exec.calls.clear();
        exec.answer = c -> "";

        cni.gcNetworkList(l, List.of(new Attachment("keep", "eth0")));

        assertEquals(List.of("b:DEL", "a:DEL", "a:GC", "b:GC"), exec.commands());
        FakeExec.Call del = exec.calls.get(1);
        assertEquals(new CniEnvironment("DEL", "stale", "/run/netns/stale", "eth0", "A=stale", "/opt/cni/bin:/usr/lib/cni"), del.env());
        assertEquals(Map.of("c", "stale"), del.stdin().get("runtimeConfig"), "the cached capability args are used");
        assertEquals("10.1.0.5/24", Json.asObject(Json.asList(Json.asObject(del.stdin().get("prevResult")).get("ips")).getFirst()).get("address"));
        FakeExec.Call gc = exec.calls.get(2);
        assertEquals(new CniEnvironment("GC", "", "", "", "", "/opt/cni/bin:/usr/lib/cni"), gc.env());
        assertEquals(List.of(Map.of("containerID", "keep", "ifname", "eth0")), gc.stdin().get("cni.dev/valid-attachments"));
        assertNull(gc.stdin().get("runtimeConfig"));
        assertEquals("net1", gc.stdin().get("name"));

        assertTrue(cni.cache().get("net1", "keep", "eth0").isPresent());
        assertFalse(cni.cache().get("net1", "stale", "eth0").isPresent());
        assertTrue(cni.cache().get("other", "stale", "eth0").isPresent(), "other networks are left alone");
    }

    @Test
    void gcCollectsErrorsAndGoesOn() {
        NetConfList l = list("1.1.0", "[{\"type\":\"a\"}]");
        addAttachment(l, "s1", "eth0");
        addAttachment(l, "s2", "eth0");
        exec.calls.clear();
        exec.answer = c -> {
            if (c.env().containerId().equals("s1")) throw new PluginException("a", "", 11, "busy", "", "");
            if (c.env().command().equals("GC")) throw new PluginException("a", "", 999, "gc broke", "", "");
            return "";
        };
        CniException e = assertThrows(CniException.class, () -> cni.gcNetworkList(l, List.of()));
        assertTrue(e.getMessage().contains("s1") && e.getMessage().contains("busy") && e.getMessage().contains("gc broke"), e.getMessage());
        assertEquals(List.of("a:DEL", "a:DEL", "a:GC"), exec.commands());
        assertEquals(List.of(), exec.calls.get(2).stdin().get("cni.dev/valid-attachments"), "an empty list is sent as one");
        assertTrue(cni.cache().get("net1", "s1", "eth0").isPresent(), "a failed DEL keeps its cache entry");
        assertFalse(cni.cache().get("net1", "s2", "eth0").isPresent());
    }

    @Test
    void gcWithoutValidAttachmentsChangesNothing() {
        NetConfList l = list("1.1.0", "[{\"type\":\"a\"},{\"type\":\"b\"}]");
        addAttachment(l, "s1", "eth0");
        exec.calls.clear();
        exec.answer = c -> "";
        CniException e = assertThrows(CniException.class, () -> cni.gcNetworkList(l, null));
        assertEquals(7, e.code());
        assertTrue(exec.calls.isEmpty(), "no DEL and no plugin GC: " + exec.commands());
        assertTrue(cni.cache().get("net1", "s1", "eth0").isPresent());
    }

    @Test
    void gcBefore110OnlyDeletesAndDisableGcDoesNothing() {
        NetConfList l = list("1.0.0", "[{\"type\":\"a\"}]");
        addAttachment(l, "s", "eth0");
        exec.calls.clear();
        exec.answer = c -> "";
        cni.gcNetworkList(l, List.of());
        assertEquals(List.of("a:DEL"), exec.commands());

        NetConfList off = NetConfList.parse("{\"cniVersion\":\"1.1.0\",\"name\":\"net1\",\"disableGC\":true,\"plugins\":[{\"type\":\"a\"}]}", "t");
        addAttachment(off, "s", "eth0");
        exec.calls.clear();
        cni.gcNetworkList(off, List.of());
        assertTrue(exec.calls.isEmpty());
    }

    @Test
    void statusAsksEachPluginFrom110() {
        exec.answer = c -> "";
        cni.statusNetworkList(list("1.0.0", "[{\"type\":\"a\"}]"));
        assertTrue(exec.calls.isEmpty());
        cni.statusNetworkList(list("1.1.0", "[{\"type\":\"a\"},{\"type\":\"b\"}]"));
        assertEquals(List.of("a:STATUS", "b:STATUS"), exec.commands());
        exec.answer = c -> {
            throw new PluginException(c.plugin(), "", 50, "not ready", "no default route", "");
        };
        CniException e = assertThrows(CniException.class, () -> cni.statusNetworkList(list("1.1.0", "[{\"type\":\"a\"}]")));
        assertEquals(50, e.code());
    }

    // ------------------------------------------------------------------ VERSION / validate

    @Test
    void validateChecksPluginsVersionsAndCapabilities() {
        exec.answer = c -> c.plugin().equals("old")
                ? "{\"cniVersion\":\"0.4.0\",\"supportedVersions\":[\"0.3.1\",\"0.4.0\"]}"
                : "{\"cniVersion\":\"1.0.0\",\"supportedVersions\":[\"0.4.0\",\"1.0.0\"]}";
        NetConfList good = list("1.0.0", "[{\"type\":\"a\",\"capabilities\":{\"portMappings\":true,\"mac\":false}},{\"type\":\"b\"}]");
        assertEquals(List.of("portMappings"), cni.validateNetworkList(good, List.of("portMappings")));
        assertEquals("VERSION", exec.calls.getFirst().env().command());
        assertEquals("1.1.0", exec.calls.getFirst().stdin().get("cniVersion"));

        NetConfList bad = list("1.0.0", "[{\"type\":\"a\"},{\"type\":\"old\"},{\"type\":\"missing-x\"}]");
        CniException e = assertThrows(CniException.class, () -> cni.validateNetworkList(bad, List.of("mac")));
        String m = e.getMessage();
        assertTrue(m.contains("\"old\" does not support config version \"1.0.0\""), m);
        assertTrue(m.contains("missing-x"), m);
        assertTrue(m.contains("capability \"mac\""), m);
    }

    @Test
    void versionInfoOfAnOldPlugin() {
        exec.answer = c -> {
            throw new PluginException("p", "", 4, "unknown CNI_COMMAND: VERSION", "", "");
        };
        assertEquals(List.of("0.1.0"), cni.versionInfo("p").supportedVersions());
    }
}
