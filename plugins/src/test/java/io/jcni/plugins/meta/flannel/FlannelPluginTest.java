package io.jcni.plugins.meta.flannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.skel.PluginContext;
import io.jcni.plugins.skel.Skel;
import io.jcni.runtime.Delegator;
import io.jcni.types.Cidr;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FlannelPluginTest {
    private static final String ENV = "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";

    @Test
    void subnetFileAsFlanneldWritesIt() {
        SubnetFile f = SubnetFile.parse(ENV, "subnet.env");
        assertEquals(new SubnetFile(Cidr.parse("10.1.0.0/16"), Cidr.parse("10.1.17.1/24"), 1472, true), f);
        assertEquals(ENV, f.format());
        assertEquals(ENV, new SubnetFile(Cidr.parse("10.1.0.0/16"), Cidr.parse("10.1.17.0/24"), 1472, true).format(), "masked subnet in");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SubnetFile.parse("FLANNEL_NETWORK=10.1.0.0/16\n", "/x"));
        assertEquals("/x is missing FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET, FLANNEL_MTU, FLANNEL_IPMASQ", e.getMessage());
    }

    @Test
    void delegateAsTheReferenceReadmeShows() {
        SubnetFile env = SubnetFile.parse(ENV, "f");
        Map<String, Object> d = FlannelConf.parse(Json.parseObject("{\"name\":\"mynet\",\"type\":\"flannel\"}")).delegateConfig(env);
        assertEquals(Json.parseObject("""
                {"name":"mynet","type":"bridge","ipMasq":false,"mtu":1472,"isGateway":true,
                 "ipam":{"type":"host-local","ranges":[[{"subnet":"10.1.17.0/24"}]],"routes":[{"dst":"10.1.0.0/16"}]}}"""), d);

        // delegate values win; top-level ipam is the base of the delegate's; cniVersion and runtimeConfig pass on
        Map<String, Object> d2 = FlannelConf.parse(Json.parseObject("""
                {"cniVersion":"1.0.0","name":"n","type":"flannel","delegate":{"bridge":"mynet0","mtu":1400,"ipMasq":true,"isDefaultGateway":false},
                 "ipam":{"dataDir":"/tmp/x","routes":[{"dst":"10.96.0.0/12"}]},"runtimeConfig":{"portMappings":[]}}""")).delegateConfig(env);
        assertEquals(1400L, d2.get("mtu"));
        assertEquals(true, d2.get("ipMasq"));
        assertEquals("mynet0", d2.get("bridge"));
        assertEquals("1.0.0", d2.get("cniVersion"));
        assertEquals(Map.of("portMappings", List.of()), d2.get("runtimeConfig"));
        assertEquals(Json.parseObject("""
                {"dataDir":"/tmp/x","routes":[{"dst":"10.96.0.0/12"},{"dst":"10.1.0.0/16"}],"type":"host-local","ranges":[[{"subnet":"10.1.17.0/24"}]]}"""),
                d2.get("ipam"));
        Map<String, Object> ipvlan = FlannelConf.parse(Json.parseObject("{\"name\":\"n\",\"delegate\":{\"type\":\"ipvlan\",\"master\":\"eth0\"}}")).delegateConfig(env);
        assertFalse(ipvlan.containsKey("isGateway"), "isGateway only for bridge");

        for (String bad : new String[] {"{\"delegate\":{\"name\":\"x\"}}", "{\"delegate\":{\"ipam\":{}}}", "{\"delegate\":{\"type\":1}}"}) {
            CniException e = assertThrows(CniException.class, () -> FlannelConf.parse(Json.parseObject(bad)).delegateConfig(env));
            assertEquals(7, e.code());
        }
    }

    // The reference's expected delegates (flannel-io/cni-plugin flannel_linux_test.go): IPv6-only,
    // dual-stack, and IPv4 with two networks.
    private static final String ENV6 = "FLANNEL_IPV6_NETWORK=fc00::/48\nFLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";
    private static final String DUAL = "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\n"
            + "FLANNEL_IPV6_NETWORK=fc00::/48\nFLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";

    private static Map<String, Object> referenceDelegate(String env) {
        return FlannelConf.parse(Json.parseObject("{\"name\":\"cni-flannel\",\"type\":\"flannel\"}")).delegateConfig(SubnetFile.parse(env, "subnet.env"));
    }

    @Test
    void dualStackDelegateAsTheReference() {
        assertEquals(Json.parseObject("""
                {"ipMasq":false,"ipam":{"routes":[{"dst":"10.1.0.0/16"},{"dst":"fc00::/48"}],
                  "ranges":[[{"subnet":"10.1.17.0/24"}],[{"subnet":"fc00::/64"}]],"type":"host-local"},
                 "isGateway":true,"mtu":1472,"name":"cni-flannel","type":"bridge"}"""), referenceDelegate(DUAL));
        SubnetFile f = SubnetFile.parse(DUAL, "subnet.env");
        assertEquals(Cidr.parse("fc00::1/64"), f.ipv6Subnet());
        assertEquals(List.of(Cidr.parse("fc00::/48")), f.ipv6Networks());
        assertEquals(DUAL, f.format(), "flanneld's order: IPv4 lines, IPv6 lines, MTU, IPMASQ");
    }

    @Test
    void ipv6OnlyDelegateAsTheReference() {
        assertEquals(Json.parseObject("""
                {"ipMasq":false,"ipam":{"routes":[{"dst":"fc00::/48"}],"ranges":[[{"subnet":"fc00::/64"}]],"type":"host-local"},
                 "isGateway":true,"mtu":1472,"name":"cni-flannel","type":"bridge"}"""), referenceDelegate(ENV6));
        SubnetFile f = SubnetFile.parse(ENV6, "subnet.env");
        assertEquals(null, f.network());
        assertEquals(null, f.subnet());
        assertEquals(ENV6, f.format());
    }

    @Test
    void severalIpv4NetworksEachGetARoute() {
        String env = "FLANNEL_NETWORK=10.1.0.0/16,192.168.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";
        assertEquals(Json.parseObject("""
                {"ipMasq":false,"ipam":{"routes":[{"dst":"10.1.0.0/16"},{"dst":"192.168.0.0/16"}],"ranges":[[{"subnet":"10.1.17.0/24"}]],"type":"host-local"},
                 "isGateway":true,"mtu":1472,"name":"cni-flannel","type":"bridge"}"""), referenceDelegate(env));
    }

    @Test
    void dualStackRoutesFollowTheGivenOnesAndTheIpamBaseIsKept() {
        Map<String, Object> d = FlannelConf.parse(Json.parseObject("""
                {"name":"n","type":"flannel","ipam":{"type":"my-ipam","unknown-param":"unknown-value",
                 "routes":[{"dst":"10.96.0.0/12"},{"dst":"192.168.244.0/24","gw":"10.1.17.20"}]}}""")).delegateConfig(SubnetFile.parse(DUAL, "f"));
        assertEquals(Json.parseObject("""
                {"type":"my-ipam","unknown-param":"unknown-value",
                 "routes":[{"dst":"10.96.0.0/12"},{"dst":"192.168.244.0/24","gw":"10.1.17.20"},{"dst":"10.1.0.0/16"},{"dst":"fc00::/48"}],
                 "ranges":[[{"subnet":"10.1.17.0/24"}],[{"subnet":"fc00::/64"}]]}"""), d.get("ipam"));
    }

    @Test
    void subnetFileRefusalsNameTheVariable() {
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> SubnetFile.parse("FLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n", "/x"));
        assertEquals("/x is missing FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET", none.getMessage());
        IllegalArgumentException swapped = assertThrows(IllegalArgumentException.class,
                () -> SubnetFile.parse("FLANNEL_IPV6_NETWORK=10.1.0.0/16\nFLANNEL_IPV6_SUBNET=fc00::1/64\nFLANNEL_MTU=1\nFLANNEL_IPMASQ=true\n", "/x"));
        assertTrue(swapped.getMessage().contains("FLANNEL_IPV6_NETWORK is not an IPv6 CIDR"), swapped.getMessage());
    }

    /** Records what was delegated; ADD answers with a fixed result. */
    static final class FakeDelegator implements Delegator {
        final List<String> calls = new ArrayList<>();
        final List<Map<String, Object>> configs = new ArrayList<>();

        @Override
        public byte[] invoke(CniCommand command, String type, byte[] stdin, Map<String, String> env) {
            calls.add(command + " " + type);
            configs.add(Json.parseObject(new String(stdin, StandardCharsets.UTF_8)));
            return command == CniCommand.ADD
                    ? "{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.1.17.2/24\",\"gateway\":\"10.1.17.1\"}]}".getBytes(StandardCharsets.UTF_8)
                    : new byte[0];
        }
    }

    private static Skel.Outcome call(FakeDelegator d, String cmd, String conf) {
        Map<String, String> env = new HashMap<>(Map.of("CNI_COMMAND", cmd, "CNI_CONTAINERID", "c1", "CNI_NETNS", "/var/run/netns/x",
                "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent"));
        return Skel.run(FlannelPlugin::new, env, conf.getBytes(StandardCharsets.UTF_8), new PluginContext(d, new PrintStream(new ByteArrayOutputStream())));
    }

    @Test
    void addWaitsForTheSubnetFileThenSavesTheDelegateForDel(@TempDir Path dir) throws Exception {
        Path sf = dir.resolve("run/subnet.env"), data = dir.resolve("data");
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"mynet\",\"type\":\"flannel\",\"subnetFile\":\"" + sf + "\",\"dataDir\":\"" + data
                + "\",\"subnetFileWait\":20}";
        FakeDelegator d = new FakeDelegator();
        Thread agent = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(300);
                Files.createDirectories(sf.getParent());
                Files.writeString(sf, ENV);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Skel.Outcome add = call(d, "ADD", conf);
        agent.join();
        assertEquals(0, add.exitCode(), add.stdout());
        assertTrue(add.stdout().contains("10.1.17.2/24"));
        assertEquals(List.of("ADD bridge"), d.calls);
        Path saved = data.resolve("c1");
        assertEquals(d.configs.getFirst(), Json.parseObject(Files.readString(saved)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(saved)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));

        String withPrev = conf.substring(0, conf.length() - 1) + ",\"prevResult\":" + add.stdout() + "}";
        assertEquals(0, call(d, "CHECK", withPrev).exitCode());
        assertEquals("CHECK bridge", d.calls.get(1));
        assertTrue(d.configs.get(1).containsKey("prevResult"));

        Files.delete(sf); // DEL needs only the saved config
        assertEquals(0, call(d, "DEL", conf).exitCode());
        assertEquals("DEL bridge", d.calls.get(2));
        assertFalse(Files.exists(saved));
        assertEquals(0, call(d, "DEL", conf).exitCode(), "DEL again: nothing saved, success");
        assertEquals(3, d.calls.size());
    }

    @Test
    void missingSubnetFileIsTryAgainLaterAfterTheWait(@TempDir Path dir) {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"flannel\",\"subnetFile\":\"" + dir.resolve("none") + "\",\"dataDir\":\""
                + dir + "\",\"subnetFileWait\":0}";
        Skel.Outcome o = call(new FakeDelegator(), "ADD", conf);
        assertEquals(1, o.exitCode());
        assertEquals(11L, Json.parseObject(o.stdout()).get("code"), o.stdout());
    }
}
