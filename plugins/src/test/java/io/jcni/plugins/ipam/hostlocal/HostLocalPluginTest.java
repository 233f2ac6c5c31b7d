package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The host-local plugin through the skeleton, as a runtime calls it. */
class HostLocalPluginTest {
    @TempDir
    Path dataDir;

    static final String V4_V6 = "\"ranges\":[[{\"subnet\":\"10.9.0.0/24\"}],[{\"subnet\":\"fd00:9::/64\"}]],"
            + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.0.0/16\",\"gw\":\"10.9.0.1\"}]";

    String conf(String version, String ipamBody) {
        return conf(version, ipamBody, "");
    }

    String conf(String version, String ipamBody, String topLevel) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"n1\",\"type\":\"bridge\"" + topLevel
                + ",\"ipam\":{\"type\":\"host-local\",\"dataDir\":\"" + dataDir + "\"," + ipamBody + "}}";
    }

    static PluginCall call(String id, String ifname) {
        return new PluginCall("host-local").env("CNI_CONTAINERID", id).env("CNI_IFNAME", ifname);
    }

    Path net() {
        return dataDir.resolve("n1");
    }

    /** The reference plugin's output for this config (captured from /usr/lib/cni/host-local 1.1.1). */
    static String expectedAdd(String v, String ip4, String ip6) {
        String routes = "[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.0.0/16\",\"gw\":\"10.9.0.1\"}]";
        String json = switch (v) {
            case "0.1.0", "0.2.0" -> "{\"cniVersion\":\"" + v + "\",\"ip4\":{\"ip\":\"" + ip4 + "/24\",\"gateway\":\"10.9.0.1\","
                    + "\"routes\":" + routes + "},\"ip6\":{\"ip\":\"" + ip6 + "/64\",\"gateway\":\"fd00:9::1\"},\"dns\":{}}";
            case "0.3.0", "0.3.1", "0.4.0" -> "{\"cniVersion\":\"" + v + "\",\"ips\":[{\"version\":\"4\",\"address\":\"" + ip4
                    + "/24\",\"gateway\":\"10.9.0.1\"},{\"version\":\"6\",\"address\":\"" + ip6 + "/64\",\"gateway\":\"fd00:9::1\"}],"
                    + "\"routes\":" + routes + ",\"dns\":{}}";
            default -> "{\"cniVersion\":\"" + v + "\",\"ips\":[{\"address\":\"" + ip4 + "/24\",\"gateway\":\"10.9.0.1\"},"
                    + "{\"address\":\"" + ip6 + "/64\",\"gateway\":\"fd00:9::1\"}],\"routes\":" + routes + ",\"dns\":{}}";
        };
        return Json.writePretty(Json.parse(json));
    }

    @Test
    void isRegistered() {
        assertTrue(PluginRegistry.types().contains("host-local"));
        assertTrue(PluginRegistry.lookup("host-local").get() instanceof HostLocalPlugin);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void addCheckDelInEveryVersion(String v) throws Exception {
        String c = conf(v, V4_V6);
        var out = call("ctr1", "eth0").run("ADD", c);
        assertEquals(0, out.exitCode(), out.stdout());
        assertEquals(expectedAdd(v, "10.9.0.2", "fd00:9::2"), out.stdout());
        assertEquals("ctr1\r\neth0", Files.readString(net().resolve("10.9.0.2")));
        assertEquals("ctr1\r\neth0", Files.readString(net().resolve("fd00:9::2")));
        assertEquals("10.9.0.2", Files.readString(net().resolve("last_reserved_ip.0")));
        assertEquals("fd00:9::2", Files.readString(net().resolve("last_reserved_ip.1")));

        // A second attachment gets the next addresses.
        assertEquals(expectedAdd(v, "10.9.0.3", "fd00:9::3"), call("ctr2", "eth0").run("ADD", c).stdout());

        boolean checkable = !v.startsWith("0.1") && !v.startsWith("0.2") && !v.startsWith("0.3");
        if (checkable) {
            String withPrev = c.substring(0, c.length() - 1) + ",\"prevResult\":" + out.stdout() + "}";
            call("ctr1", "eth0").ok("CHECK", withPrev);
        }

        call("ctr1", "eth0").ok("DEL", c);
        assertFalse(Files.exists(net().resolve("10.9.0.2")));
        assertFalse(Files.exists(net().resolve("fd00:9::2")));
        assertTrue(Files.exists(net().resolve("10.9.0.3")));
        call("ctr1", "eth0").ok("DEL", c); // idempotent
        call("never-added", "eth0").ok("DEL", c);

        if (checkable) {
            Map<String, Object> e = call("ctr1", "eth0").fails("CHECK", c);
            assertEquals("host-local: Failed to find address added by container ctr1", e.get("msg"));
            assertEquals(v, e.get("cniVersion"));
        }
    }

    @Test
    void resultCarriesDnsFromResolvConfAndNoInterfaces() throws Exception {
        Path rc = dataDir.resolve("resolv.conf");
        Files.writeString(rc, "nameserver 10.9.0.53\nsearch example.com\noptions ndots:2\ndomain example.com\n");
        Map<String, Object> r = call("ctr1", "eth0").ok("ADD",
                conf("1.0.0", "\"subnet\":\"10.9.0.0/24\",\"gateway\":\"10.9.0.254\",\"resolvConf\":\"" + rc + "\""));
        assertEquals(Json.write(Json.parse("""
                {"cniVersion":"1.0.0","ips":[{"address":"10.9.0.1/24","gateway":"10.9.0.254"}],
                 "dns":{"nameservers":["10.9.0.53"],"domain":"example.com","search":["example.com"],"options":["ndots:2"]}}""")),
                Json.write(r));
        assertFalse(r.containsKey("interfaces"));
    }

    @Test
    void honoursRequestedAddresses() {
        Map<String, Object> r = call("ctr1", "eth0").env("CNI_ARGS", "IgnoreUnknown=1;K8S_POD_NAME=p;IP=10.9.0.77")
                .ok("ADD", conf("1.0.0", V4_V6));
        assertEquals("10.9.0.77/24", Json.asObject(((List<?>) r.get("ips")).get(0)).get("address"));

        r = call("ctr2", "eth0").ok("ADD", conf("1.1.0", V4_V6, ",\"runtimeConfig\":{\"ips\":[\"fd00:9::99/64\"]}"));
        assertEquals("fd00:9::99/64", Json.asObject(((List<?>) r.get("ips")).get(1)).get("address"));

        Map<String, Object> e = call("ctr3", "eth0").env("CNI_ARGS", "IP=10.9.0.77").fails("ADD", conf("1.0.0", V4_V6));
        assertEquals(11L, e.get("code"));
        assertEquals("failed to allocate for range 0: requested IP address 10.9.0.77 is not available in range set "
                + "10.9.0.1-10.9.0.254", e.get("msg"));
        assertFalse(Files.exists(net().resolve("fd00:9::3")), "the IPv6 reservation must not be made");
    }

    @Test
    void errorsCarryMeaningfulCodes() {
        Map<String, Object> e = call("c", "eth0").env("CNI_ARGS", "K8S_POD_NAME=p").fails("ADD", conf("1.0.0", V4_V6));
        assertEquals(4L, e.get("code"));
        assertEquals("ARGS: unknown args [\"K8S_POD_NAME=p\"]", e.get("msg"));

        e = call("c", "eth0").fails("ADD", "{\"cniVersion\":\"1.0.0\",\"name\":\"n1\",\"type\":\"bridge\"}");
        assertEquals(7L, e.get("code"));
        assertEquals("IPAM config missing 'ipam' key", e.get("msg"));

        e = call("c", "eth0").fails("ADD", conf("1.0.0", "\"subnet\":\"10.9.0.0/24\",\"gateway\":\"10.8.0.1\""));
        assertEquals(7L, e.get("code"));
        assertEquals("invalid range set 0: gateway 10.8.0.1 not in network 10.9.0.0/24", e.get("msg"));

        e = call("c", "eth0").fails("ADD", conf("1.0.0", "\"subnet\":42"));
        assertEquals(6L, e.get("code"));
        assertTrue(((String) e.get("msg")).contains("ipam.subnet"), e.toString());

        e = call("c", "eth0").fails("ADD", conf("0.2.0", "\"ranges\":[[{\"subnet\":\"10.9.0.0/24\"}],[{\"subnet\":\"10.8.0.0/24\"}]]"));
        assertEquals(7L, e.get("code"));
        assertEquals("CNI version 0.2.0 does not support more than 1 address per family", e.get("msg"));

        String tiny = conf("1.0.0", "\"subnet\":\"10.9.0.0/30\"");
        call("a", "eth0").ok("ADD", tiny);
        e = call("b", "eth0").fails("ADD", tiny);
        assertEquals(11L, e.get("code"));
        assertEquals("failed to allocate for range 0: no IP addresses available in range set: 10.9.0.1-10.9.0.2",
                e.get("msg"));
    }

    @Test
    void gcReleasesEverythingButValidAttachments() throws Exception {
        String c = conf("1.1.0", V4_V6);
        call("keep", "eth0").ok("ADD", c);  // .2
        call("gone", "eth0").ok("ADD", c);  // .3
        call("keep", "eth1").ok("ADD", c);  // .4
        String gc = conf("1.1.0", V4_V6, ",\"cni.dev/valid-attachments\":[{\"containerID\":\"keep\",\"ifname\":\"eth0\"},"
                + "{\"containerID\":\"keep\",\"ifname\":\"eth1\"}]");
        new PluginCall("host-local").env("CNI_CONTAINERID", null).env("CNI_IFNAME", null).env("CNI_NETNS", null).ok("GC", gc);
        assertTrue(Files.exists(net().resolve("10.9.0.2")));
        assertFalse(Files.exists(net().resolve("10.9.0.3")));
        assertFalse(Files.exists(net().resolve("fd00:9::3")));
        assertTrue(Files.exists(net().resolve("10.9.0.4")));
        assertTrue(Files.exists(net().resolve("last_reserved_ip.0")));
        assertTrue(Files.exists(net().resolve("lock")));

        // An empty list releases everything; a missing one is refused rather than taken as empty.
        Map<String, Object> e = new PluginCall("host-local").fails("GC", c);
        assertEquals(7L, e.get("code"));
        assertTrue(Files.exists(net().resolve("10.9.0.2")));
        new PluginCall("host-local").ok("GC", conf("1.1.0", V4_V6, ",\"cni.dev/valid-attachments\":[]"));
        assertFalse(Files.exists(net().resolve("10.9.0.2")));
        assertFalse(Files.exists(net().resolve("10.9.0.4")));

        // GC is a 1.1.0 command.
        assertEquals(1L, new PluginCall("host-local").fails("GC", conf("1.0.0", V4_V6)).get("code"));
    }

    @Test
    void statusReportsUnusableDataDirAndFullRangeSets() throws Exception {
        String c = conf("1.1.0", "\"ranges\":[[{\"subnet\":\"10.9.0.0/30\"}],[{\"subnet\":\"fd00:9::/64\"}]]");
        PluginCall status = new PluginCall("host-local").env("CNI_CONTAINERID", null).env("CNI_IFNAME", null)
                .env("CNI_NETNS", null).env("CNI_PATH", null);
        status.ok("STATUS", c);
        assertFalse(Files.exists(net()), "STATUS creates nothing");

        call("a", "eth0").ok("ADD", c); // takes 10.9.0.2, the only address of range set 0
        Map<String, Object> e = status.fails("STATUS", c);
        assertEquals(50L, e.get("code"));
        assertEquals("host-local: no IP addresses available", e.get("msg"));
        assertEquals("range set 0: 10.9.0.1-10.9.0.2", e.get("details"));
        call("a", "eth0").ok("DEL", c);
        status.ok("STATUS", c);

        Path file = dataDir.resolve("not-a-dir");
        Files.writeString(file, "x");
        String bad = c.replace("\"dataDir\":\"" + dataDir + "\"", "\"dataDir\":\"" + file.resolve("sub") + "\"");
        e = status.fails("STATUS", bad);
        assertEquals(50L, e.get("code"));
        assertEquals("host-local: data directory unusable", e.get("msg"));
        assertTrue(((String) e.get("details")).contains("not a directory"), e.toString());

        assertEquals(1L, status.fails("STATUS", conf("1.0.0", V4_V6)).get("code"));
    }

    @Test
    void checkComparesPrevResultWithTheStore() {
        String c = conf("1.0.0", V4_V6);
        String added = call("ctr1", "eth0").run("ADD", c).stdout();
        String withPrev = c.substring(0, c.length() - 1) + ",\"prevResult\":" + added + "}";
        call("ctr1", "eth0").ok("CHECK", withPrev);
        // Someone else's address in prevResult: the attachment does not hold it.
        String foreign = withPrev.replace("10.9.0.2/24", "10.9.0.200/24");
        Map<String, Object> e = call("ctr1", "eth0").fails("CHECK", foreign);
        assertEquals("host-local: address 10.9.0.200 is not reserved for container ctr1 interface eth0", e.get("msg"));
        // Addresses outside host-local's ranges belong to someone else and are not its business.
        call("ctr1", "eth0").ok("CHECK", withPrev.replace("10.9.0.2/24", "172.16.0.9/24"));
    }
}
