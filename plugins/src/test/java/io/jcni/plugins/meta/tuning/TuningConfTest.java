package io.jcni.plugins.meta.tuning;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.PluginRegistry;
import io.jcni.linux.MacAddress;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.CniArgs;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Config parsing and validation: nothing here touches a namespace. */
class TuningConfTest {
    private static final String PREV = ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"eth0\"}]}";

    private static PluginRequest request(String json, String cniArgs) {
        String text = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"tuning\"" + json + "}";
        return new PluginRequest(CniCommand.ADD, "c1", "/var/run/netns/x", "eth0", CniArgs.parse(cniArgs), List.of(),
                text.getBytes(StandardCharsets.UTF_8), Json.parseObject(text), CniVersion.V1_0_0, null, Map.of(),
                PluginRegistry.context(System.err));
    }

    private static String conf(String json) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"tuning\"" + json + "}";
    }

    @Test
    void defaults() {
        TuningConf c = TuningConf.parse(request("", null));
        assertEquals("/run/cni/tuning", c.dataDir());
        assertTrue(c.sysctl().isEmpty());
        assertNull(c.mac());
        assertEquals(0, c.mtu());
        assertNull(c.allmulti());
        assertNull(c.txQLen());
        assertEquals(false, c.promisc());
        assertEquals(false, c.changesLink());
    }

    @Test
    void everyKey() {
        TuningConf c = TuningConf.parse(request(",\"dataDir\":\"/tmp/d\",\"sysctl\":{\"net.core.somaxconn\":\"500\"},"
                + "\"mac\":\"C2:B0:57:49:47:F1\",\"mtu\":1454,\"promisc\":true,\"allmulti\":false,\"txQLen\":0", null));
        assertEquals("/tmp/d", c.dataDir());
        assertEquals(Map.of("net.core.somaxconn", "500"), c.sysctl());
        assertEquals("c2:b0:57:49:47:f1", c.mac().toString());
        assertEquals(1454, c.mtu());
        assertEquals(true, c.promisc());
        assertEquals(false, c.allmulti());
        assertEquals(0, c.txQLen());
        assertTrue(c.changesLink());
    }

    @Test
    void macPrecedenceIsConfigThenCniArgsThenCapabilityThenArgsCni() {
        String base = ",\"mac\":\"02:00:00:00:00:01\"";
        String rc = ",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}";
        String args = ",\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:04\",\"mtu\":1300,\"promisc\":true,\"allmulti\":true,"
                + "\"txQLen\":7,\"sysctl\":{\"net.core.somaxconn\":\"900\",\"net.ipv4.ip_forward\":\"1\"}}}";
        String env = "MAC=02:00:00:00:00:02";
        assertEquals("02:00:00:00:00:01", TuningConf.parse(request(base, null)).mac().toString());
        assertEquals("02:00:00:00:00:02", TuningConf.parse(request(base, env)).mac().toString());
        assertEquals("02:00:00:00:00:03", TuningConf.parse(request(base + rc, env)).mac().toString());
        TuningConf all = TuningConf.parse(request(base + rc + ",\"mtu\":1500,\"sysctl\":{\"net.core.somaxconn\":\"500\"}" + args, env));
        assertEquals("02:00:00:00:00:04", all.mac().toString());
        assertEquals(1300, all.mtu());
        assertEquals(true, all.promisc());
        assertEquals(true, all.allmulti());
        assertEquals(7, all.txQLen());
        assertEquals("{\"net.core.somaxconn\":\"900\",\"net.ipv4.ip_forward\":\"1\"}", Json.write(all.sysctl()));
    }

    @Test
    void unknownCniArgsAreRefusedUnlessIgnored() {
        CniException e = assertThrows(CniException.class, () -> TuningConf.parse(request("", "FOO=1")));
        assertEquals(4, e.code());
        assertEquals("02:00:00:00:00:09", TuningConf.parse(request("", "IgnoreUnknown=1;FOO=1;MAC=02:00:00:00:00:09")).mac().toString());
    }

    @Test
    void macFormatsAsGoParsesThem() {
        assertEquals("02:42:ac:11:00:02", TuningConf.parseMac("02-42-AC-11-00-02").toString());
        assertEquals("02:42:ac:11:00:02", TuningConf.parseMac("0242.ac11.0002").toString());
        assertEquals(MacAddress.parse("00:00:00:00:fe:80:00:00"), TuningConf.parseMac("00:00:00:00:fe:80:00:00"));
        for (String bad : new String[] {"", "02:42:ac:11:00", "0242ac110002", "02:42:ac:11:00:0g", "2:42:ac:11:0:2"}) {
            CniException e = assertThrows(CniException.class, () -> TuningConf.parseMac(bad), bad);
            assertEquals("invalid args " + bad + " for MAC addr", e.msg());
        }
        Map<String, Object> e = new PluginCall("tuning").fails("ADD", conf(",\"mac\":\"zz\"" + PREV));
        assertEquals(7L, e.get("code"));
    }

    @Test
    void wrongTypesNameTheField() {
        Map<String, Object> e = new PluginCall("tuning").fails("ADD", conf(",\"mtu\":\"big\"" + PREV));
        assertEquals("invalid type for 'mtu'", e.get("msg"));
        e = new PluginCall("tuning").fails("ADD", conf(",\"sysctl\":{\"net.core.somaxconn\":500}" + PREV));
        assertEquals("invalid type for 'sysctl.net.core.somaxconn'", e.get("msg"));
        e = new PluginCall("tuning").fails("ADD", conf(",\"mtu\":-1" + PREV));
        assertEquals("invalid mtu -1", e.get("msg"));
    }

    @Test
    void sysctlKeysResolveUnderProcSysNet() {
        assertEquals("net/core/somaxconn", SysctlKeys.resolve("net.core.somaxconn", "eth0"));
        assertEquals("net/ipv4/conf/eth0/arp_filter", SysctlKeys.resolve("net.ipv4.conf.IFNAME.arp_filter", "eth0"));
        assertEquals("net/ipv4/conf/eth0.100/arp_filter", SysctlKeys.resolve("net.ipv4.conf.IFNAME.arp_filter", "eth0.100"));
        assertEquals("net/ipv6/conf/all/forwarding", SysctlKeys.resolve("net/ipv6/conf/all/forwarding", "eth0"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"kernel.hostname", "net", "net.", "net.ipv4.conf.../../..", "net/../kernel/hostname",
            "net..core.somaxconn", "/net/core/somaxconn", "vm.swappiness", "", "netfilter.x"})
    void badSysctlKeysAreRefusedNamingTheKey(String key) {
        CniException e = assertThrows(CniException.class, () -> SysctlKeys.resolve(key, "eth0"));
        assertEquals(7, e.code());
        assertEquals("invalid net sysctl key: \"" + key + "\"", e.msg());
        // Through the plugin: refused before the namespace is even opened.
        Map<String, Object> err = new PluginCall("tuning")
                .fails("ADD", conf(",\"sysctl\":{\"net.core.somaxconn\":\"1\"," + Json.write(key) + ":\"1\"}" + PREV));
        assertEquals("invalid net sysctl key: " + Json.write(key), err.get("msg"));
    }

    @Test
    void duplicatedSysctlKeysAreRefused() {
        String dup = ",\"other\":{\"sysctl\":{\"a\":[1,{\"b\":\"}\"}]}},\"sysctl\":{\"net.core.somaxconn\":\"1\",\"x\":{\"y\":1},"
                + "\"net.core.som\\u0061xconn\":\"2\"}" + PREV;
        Map<String, Object> e = new PluginCall("tuning").fails("ADD", conf(dup));
        assertEquals("duplicated sysctl keys are not allowed", e.get("msg"));
        e = new PluginCall("tuning").fails("CHECK", conf(dup));
        assertEquals("duplicated sysctl keys are not allowed", e.get("msg"));
        SysctlKeys.checkDuplicates(conf(",\"a\":\"sysctl\",\"sysctl\":{\"net.a\":\"1\",\"net.b\":\"1\"},\"b\":[\"net.a\"]").getBytes());
    }

    @Test
    void prevResultIsRequired() {
        Map<String, Object> e = new PluginCall("tuning").fails("ADD", conf(",\"mtu\":1400"));
        assertEquals("Required prevResult missing", e.get("msg"));
        e = new PluginCall("tuning").fails("CHECK", conf(",\"mtu\":1400"));
        assertEquals("Required prevResult missing", e.get("msg"));
    }

    @Test
    void allowlistLimitsKeys(@TempDir Path dir) throws IOException {
        Path list = dir.resolve("allowlist.conf");
        SysctlKeys.checkAllowlist(Map.of("anything", "1"), list); // no file: no limit
        Files.writeString(list, "^net\\.core\\.\n\n  ^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]*$  \n");
        SysctlKeys.checkAllowlist(Map.of("net.core.somaxconn", "1", "net.ipv4.conf.IFNAME.arp_filter", "1"), list);
        CniException e = assertThrows(CniException.class,
                () -> SysctlKeys.checkAllowlist(Map.of("net.ipv4.ip_forward", "1"), list));
        assertEquals("Sysctl net.ipv4.ip_forward is not allowed. Only the following sysctls are allowed: "
                + "[^net\\.core\\. ^net\\.ipv4\\.conf\\.IFNAME\\.[a-z_]*$]", e.msg());
    }

    @Test
    void backupFileIsGoMarshalIndent() {
        assertEquals("{}", new Backup(null, null, 0, null, null).toJson());
        Backup b = new Backup("02:00:00:00:00:01", false, 1500, true, 1000);
        assertEquals("{\n \"mac\": \"02:00:00:00:00:01\",\n \"promisc\": false,\n \"mtu\": 1500,\n \"allmulti\": true,\n \"txQLen\": 1000\n}",
                b.toJson());
        assertEquals(b, Backup.fromJson(b.toJson()));
        assertEquals(new Backup(null, null, 9000, null, null), Backup.fromJson("{\n \"mtu\": 9000\n}"));
        assertEquals(Path.of("/run/cni/tuning/ctr_eth0.json"), Backup.file("/run/cni/tuning", "ctr", "eth0"));
    }

    /** A damaged backup (truncated, wrong type, empty, not JSON) restores nothing, as upstream, and is named. */
    @Test
    void aDamagedBackupIsNamedAndRestoresNothing(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("ctr_eth0.json");
        for (String damaged : List.of("{\n \"mtu\": 15", "{\"mtu\": \"1500\"}", "", "mtu=1500")) {
            Files.writeString(f, damaged);
            java.io.ByteArrayOutputStream log = new java.io.ByteArrayOutputStream();
            assertEquals(new Backup(null, null, 0, null, null), Backup.load(f, new java.io.PrintStream(log, true, StandardCharsets.UTF_8)));
            String said = log.toString(StandardCharsets.UTF_8);
            assertTrue(said.startsWith("tuning: damaged state file " + f + ": ") && said.contains("nothing restored"), said);
        }
        assertNull(Backup.load(dir.resolve("none.json"), System.err));
    }
}
