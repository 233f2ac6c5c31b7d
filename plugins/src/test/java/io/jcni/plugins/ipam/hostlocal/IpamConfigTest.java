package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mirrors upstream's config_test.go and dns_test.go. */
class IpamConfigTest {
    static String net(String version, String ipam, String extra) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"mynet\",\"type\":\"ipvlan\",\"master\":\"foo0\","
                + extra + "\"ipam\":" + ipam + "}";
    }

    static IpamConfig load(String ipam) {
        return IpamConfig.load(net("0.3.1", ipam, ""), null);
    }

    static String error(String json, String args) {
        return assertThrows(CniException.class, () -> IpamConfig.load(json, args)).msg();
    }

    static List<IpAddr> ips(String... s) {
        return java.util.Arrays.stream(s).map(IpAddr::parse).toList();
    }

    @Test
    void parsesOldStyleConfig() {
        IpamConfig c = load("""
                {"type":"host-local","subnet":"10.1.2.0/24","rangeStart":"10.1.2.9","rangeEnd":"10.1.2.20",
                 "gateway":"10.1.2.30"}""");
        assertEquals("mynet", c.name());
        assertEquals("0.3.1", c.cniVersion());
        assertEquals("host-local", c.type());
        assertEquals(1, c.ranges().size());
        Range r = c.ranges().get(0).ranges().get(0);
        assertEquals("10.1.2.0/24", r.subnet().toString());
        assertEquals("10.1.2.9-10.1.2.20", r.toString());
        assertEquals(IpAddr.parse("10.1.2.30"), r.gateway());
        assertEquals(Path.of("/var/lib/cni/networks"), c.effectiveDataDir());
        assertNull(c.dataDir());
    }

    @Test
    void parsesNewStyleAndMixedConfigsInUpstreamOrder() {
        IpamConfig c = IpamConfig.load(net("0.3.1", """
                {"type":"host-local","subnet":"10.1.2.0/24","dataDir":"/tmp/x",
                 "ranges":[[{"subnet":"11.1.2.0/24","rangeStart":"11.1.2.9","rangeEnd":"11.1.2.20","gateway":"11.1.2.30"},
                            {"subnet":"12.1.2.0/24"}],
                           [{"subnet":"2001:db8:1::/64"}]]}""",
                "\"runtimeConfig\":{\"ipRanges\":[[{\"subnet\":\"13.0.0.0/24\"}]]},"), "");
        assertEquals(4, c.ranges().size());
        assertEquals("13.0.0.1-13.0.0.254", c.ranges().get(0).toString()); // capability first
        assertEquals("10.1.2.1-10.1.2.254", c.ranges().get(1).toString()); // then the legacy range
        assertEquals("11.1.2.9-11.1.2.20,12.1.2.1-12.1.2.254", c.ranges().get(2).toString());
        assertEquals("2001:db8:1::1-2001:db8:1:0:ffff:ffff:ffff:ffff", c.ranges().get(3).toString());
        assertEquals(Path.of("/tmp/x"), c.effectiveDataDir());
    }

    @Test
    void collectsRequestedIpsFromEnvArgsAndRuntimeConfig() {
        String json = net("0.3.1", """
                {"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24"}],[{"subnet":"11.1.2.0/24"}],
                 [{"subnet":"2001:db8:1::/64"}]]}""",
                "\"args\":{\"cni\":{\"ips\":[\"10.1.2.11\",\"11.11.11.11\",\"2001:db8:1::11/64\"]}},"
                        + "\"runtimeConfig\":{\"ips\":[\"10.1.2.12/24\"]},");
        assertEquals(ips("10.1.2.10", "10.1.2.11", "11.11.11.11", "2001:db8:1::11", "10.1.2.12"),
                IpamConfig.load(json, "IP=10.1.2.10").requestedIps());
        assertEquals(ips("10.1.2.10", "11.1.2.10", "10.1.2.11", "11.11.11.11", "2001:db8:1::11", "10.1.2.12"),
                IpamConfig.load(json, "IgnoreUnknown=1;K8S_POD_NAME=x;IP=10.1.2.10,11.1.2.10").requestedIps());
        assertEquals("ARGS: unknown args [\"K8S_POD_NAME=x\" \"FOO=bar\"]", error(json, "K8S_POD_NAME=x;FOO=bar;IP=10.1.2.10"));
        assertEquals("ARGS: invalid pair \"IP\"", error(json, "IP"));
        assertEquals("ARGS: error parsing value of pair \"IP=nope\": invalid IP address nope", error(json, "IP=nope"));
        assertEquals("invalid IP address bogus", error(json.replace("10.1.2.12/24", "bogus"), null));
    }

    @Test
    void reportsUpstreamErrors() {
        assertEquals("IPAM config missing 'ipam' key", error("{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}", null));
        assertEquals("no IP ranges specified", error(net("1.0.0", "{\"type\":\"host-local\"}", ""), null));
        assertEquals("range set 0 overlaps with 1", error(net("0.3.1", """
                {"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24","rangeEnd":"10.1.2.128"}],
                 [{"subnet":"10.1.2.0/24","rangeStart":"10.1.2.15"}]]}""", ""), null));
        assertEquals("range set 1 overlaps with 2", error(net("0.3.1", """
                {"type":"host-local","ranges":[[{"subnet":"10.9.0.0/24"}],[{"subnet":"10.1.2.0/24"}],
                 [{"subnet":"10.1.0.0/16"}]]}""", ""), null));
        assertEquals("CNI version 0.2.0 does not support more than 1 address per family", error(net("0.2.0", """
                {"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24"}],[{"subnet":"11.1.2.0/24"}]]}""", ""), null));
        IpamConfig.load(net("0.2.0", """
                {"type":"host-local","ranges":[[{"subnet":"10.1.2.0/24"}],[{"subnet":"2001:db8:1::/64"}]]}""", ""), null);
        assertEquals("invalid range set 0: Network 10.1.2.0/31 too small to allocate from",
                error(net("1.0.0", "{\"subnet\":\"10.1.2.0/31\"}", ""), null));
        assertEquals("invalid range set 1: empty range set",
                error(net("1.0.0", "{\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[]]}", ""), null));
        assertEquals("invalid range set 0: IP <nil> not v4 nor v6",
                error(net("1.0.0", "{\"ranges\":[[{\"rangeStart\":\"10.1.2.5\"}]]}", ""), null));
        assertEquals("invalid range set 0: mixed address families", error(net("1.0.0",
                "{\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"},{\"subnet\":\"2001:db8::/64\"}]]}", ""), null));
        assertEquals("invalid CIDR address: 10.1.2.0", error(net("1.0.0", "{\"subnet\":\"10.1.2.0\"}", ""), null));
        assertEquals("invalid range set 0: IPNet IP and Mask version mismatch",
                error(net("1.0.0", "{\"subnet\":\"::ffff:10.1.2.0/120\"}", ""), null));
        CniException e = assertThrows(CniException.class, () -> IpamConfig.load(net("1.0.0", "{\"subnet\":\"10.1.2.0/33\"}", ""), null));
        assertEquals(7, e.code());
        assertEquals(4, assertThrows(CniException.class, () -> IpamConfig.load(net("1.0.0", "{\"subnet\":\"10.1.2.0/24\"}", ""),
                "IP=nope")).code());
        assertEquals("invalid IP address: 10.1.2.x",
                error(net("1.0.0", "{\"subnet\":\"10.1.2.0/24\",\"gateway\":\"10.1.2.x\"}", ""), null));
        assertTrue(error("{not json", null).length() > 0);
    }

    @Test
    void emptyStringsMeanAbsentAndKeysMatchCaseInsensitively() {
        IpamConfig c = load("{\"Subnet\":\"10.1.2.0/24\",\"RANGESTART\":\"10.1.2.9\",\"gateway\":\"\"}");
        Range r = c.ranges().get(0).ranges().get(0);
        assertEquals(IpAddr.parse("10.1.2.9"), r.rangeStart());
        assertEquals(IpAddr.parse("10.1.2.1"), r.gateway());
    }

    /** go-cni's IPRanges struct has no JSON tags: containerd sends Subnet, RangeStart, ... */
    @Test
    void goCniIpRangesAreRead() {
        IpamConfig c = IpamConfig.load(net("1.0.0", "{\"type\":\"host-local\"}",
                "\"runtimeConfig\":{\"IPRanges\":[[{\"Subnet\":\"10.9.0.0/24\",\"RangeStart\":\"10.9.0.50\",\"RangeEnd\":\"\","
                        + "\"Gateway\":\"\"}]],\"IPs\":[\"10.9.0.60\"]},"), null);
        Range r = c.ranges().get(0).ranges().get(0);
        assertEquals(IpAddr.parse("10.9.0.50"), r.rangeStart());
        assertEquals(IpAddr.parse("10.9.0.1"), r.gateway());
        assertEquals(ips("10.9.0.60"), c.requestedIps());
    }

    @Test
    void storeLocationReadsNothingElse() {
        IpamConfig.StoreLocation at = IpamConfig.storeOf(io.jcni.types.Json.parseObject(net("1.0.0",
                "{\"type\":\"host-local\",\"DataDir\":\"/tmp/x\",\"subnet\":\"bad\"}", "\"runtimeConfig\":{\"ips\":[\"nonsense\"]},")));
        assertEquals(Path.of("/tmp/x"), at.dataDir());
        assertEquals("mynet", at.network());
    }

    @Test
    void parsesRoutes() {
        IpamConfig c = load("""
                {"subnet":"10.1.2.0/24","routes":[{"dst":"0.0.0.0/0"},{"dst":"192.168.0.0/16","gw":"1.1.1.1"},
                 {"dst":"2001:db8:2::0/64","gw":"2001:db8:3::1","mtu":1400,"priority":5}]}""");
        assertEquals(List.of(
                new Result.Route(Cidr.parse("0.0.0.0/0"), null),
                new Result.Route(Cidr.parse("192.168.0.0/16"), IpAddr.parse("1.1.1.1")),
                new Result.Route(Cidr.parse("2001:db8:2::/64"), IpAddr.parse("2001:db8:3::1"), 1400, null, 5, null, null)),
                c.routes());
    }

    @Test
    void parsesResolvConf(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("resolv.conf");
        Files.writeString(f, """
                # comment
                ; another
                nameserver 192.0.2.0
                nameserver 192.0.2.2   \s
                  nameserver 192.0.2.3 extra
                domain example.com
                options foo bar
                options baz
                search example.com example.net
                search example.org
                lonely
                """);
        Result.Dns d = ResolvConf.read(f);
        assertEquals(List.of("192.0.2.0", "192.0.2.2", "192.0.2.3"), d.nameservers());
        assertEquals("example.com", d.domain());
        assertEquals(List.of("example.com", "example.net", "example.org"), d.search());
        assertEquals(List.of("foo", "bar", "baz"), d.options());
        assertTrue(ResolvConf.parse("").isEmpty());

        IpamConfig c = load("{\"subnet\":\"10.1.2.0/24\",\"resolvConf\":\"" + f + "\"}");
        assertEquals(d, HostLocal.dns(c));
        IpamConfig missing = load("{\"subnet\":\"10.1.2.0/24\",\"resolvConf\":\"" + tmp.resolve("nope") + "\"}");
        assertThrows(CniException.class, () -> HostLocal.dns(missing));
    }
}
