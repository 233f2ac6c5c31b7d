package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** net-conf.json read as flanneld reads it: every key, Go's casing rules, flanneld's checks and messages, jcni's refusals by name. */
class NetworkConfigTest {
    private static final String VXLAN = "\"Backend\":{\"Type\":\"vxlan\"}";

    private static NetworkConfig parse(String json) {
        return NetworkConfig.parse(json);
    }

    /** The message of the refusal, which must name {@code key}. */
    private static String refusal(String json, String key) {
        String msg = assertThrows(IllegalArgumentException.class, () -> parse(json), json).getMessage();
        assertTrue(msg.contains(key), "names " + key + ": " + msg);
        return msg;
    }

    @Test
    void defaultsAsFlanneld() {
        NetworkConfig c = parse("{\"Network\":\"10.5.0.0/16\"," + VXLAN + "}");
        assertEquals(Cidr.parse("10.5.0.0/16"), c.network());
        assertEquals(24, c.subnetLen());
        assertEquals(IpAddr.parse("10.5.1.0"), c.subnetMin(), "the first subnet is skipped");
        assertEquals(IpAddr.parse("10.5.255.0"), c.subnetMax());
        assertEquals(255, c.capacity());
        assertEquals(new NetworkConfig.Vxlan(1, 8472, 0, false, false, false), c.backend());
        assertEquals("flannel.1", ((NetworkConfig.Vxlan) c.backend()).device());
        assertEquals(1450, c.backend().podMtu(1500), "underlay minus 50");
    }

    @Test
    void smallNetworksGetSubnetsTwoBitsLonger() {
        NetworkConfig c = parse("{\"Network\":\"10.5.0.0/23\"," + VXLAN + "}");
        assertEquals(25, c.subnetLen());
        assertEquals(IpAddr.parse("10.5.0.128"), c.subnetMin());
        assertEquals(3, c.capacity());
        assertEquals(30, parse("{\"Network\":\"10.5.0.0/28\"," + VXLAN + "}").subnetLen());
        assertEquals("network config: Network: network is too small. Minimum useful network prefix is /28",
                refusal("{\"Network\":\"10.5.0.0/29\"," + VXLAN + "}", "Network"));
    }

    @Test
    void explicitValuesAndBackends() {
        NetworkConfig c = parse("""
                {"Network":"10.0.0.0/8","SubnetLen":20,"SubnetMin":"10.10.0.0","SubnetMax":"10.99.0.0",
                 "Backend":{"Type":"vxlan","VNI":42,"Port":4789}}""");
        assertEquals(20, c.subnetLen());
        assertEquals(new NetworkConfig.Vxlan(42, 4789), c.backend());
        assertEquals(Cidr.parse("10.10.0.0/20"), c.subnet(0));
        assertEquals(Cidr.parse("10.10.16.0/20"), c.subnet(1));
        assertTrue(c.leasable(Cidr.parse("10.99.0.0/20")));
        assertFalse(c.leasable(Cidr.parse("10.99.16.0/20")), "above SubnetMax");
        assertFalse(c.leasable(Cidr.parse("10.10.0.0/24")), "wrong length");
        NetworkConfig h = parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}");
        assertEquals(new NetworkConfig.HostGw(), h.backend());
        assertEquals(1500, h.backend().podMtu(1500));
    }

    /** Go's encoding/json into a struct: keys fold, the last spelling wins; flanneld lower-cases the backend type. */
    @Test
    void keysMatchCaseInsensitivelyAsInGo() {
        NetworkConfig c = parse("""
                {"network":"10.5.0.0/16","subnetlen":26,"SUBNETMIN":"10.5.0.64","subnetMax":"10.5.0.192",
                 "backend":{"type":"VXLAN","vni":4096,"port":0,"mtu":9000,"gbp":true,"learning":true,"directrouting":true}}""");
        assertEquals(26, c.subnetLen());
        assertEquals(IpAddr.parse("10.5.0.64"), c.subnetMin());
        assertEquals(IpAddr.parse("10.5.0.192"), c.subnetMax());
        assertEquals(new NetworkConfig.Vxlan(4096, 8472, 9000, true, true, true), c.backend());
        assertEquals("flannel.4096", ((NetworkConfig.Vxlan) c.backend()).device());
        assertEquals(new NetworkConfig.HostGw(), parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"type\":\"host-gw\"}}").backend());
        assertEquals(new NetworkConfig.HostGw(), parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"Host-GW\"}}").backend());
        // several spellings of one key: the last in the document wins
        assertEquals(7, ((NetworkConfig.Vxlan) parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":3,\"vni\":7}}").backend()).vni());
        // keys flannel does not know are ignored, as Go ignores them
        assertEquals(new NetworkConfig.Vxlan(1, 8472),
                parse("{\"Network\":\"10.5.0.0/16\",\"Comment\":\"x\",\"Backend\":{\"Type\":\"vxlan\",\"MacPrefix\":\"0E-2A\"}}").backend());
    }

    @Test
    void backendKeysAsFlanneldMeansThem() {
        NetworkConfig.Vxlan port0 = (NetworkConfig.Vxlan) parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"Port\":0}}").backend();
        assertEquals(8472, port0.port(), "Port 0: the kernel's default");
        NetworkConfig.Vxlan mtu = (NetworkConfig.Vxlan) parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"MTU\":1400}}").backend();
        assertEquals(1350, mtu.podMtu(9000), "Backend.MTU replaces the underlay's, then 50 goes to VXLAN");
        assertEquals(68, ((NetworkConfig.Vxlan) parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"MTU\":118}}").backend()).podMtu(1500));
        NetworkConfig.Vxlan flags = (NetworkConfig.Vxlan) parse(
                "{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"GBP\":true,\"Learning\":true,\"DirectRouting\":true}}").backend();
        assertTrue(flags.gbp() && flags.learning() && flags.directRouting());
        // null leaves the default, as Go leaves the field
        assertEquals(1, ((NetworkConfig.Vxlan) parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":null}}").backend()).vni());
        // flanneld's other switches that change nothing jcni does: type-checked, accepted
        parse("{\"Network\":\"10.5.0.0/16\",\"EnableIPv4\":true,\"EnableIPv6\":false,\"EnableNFTables\":true," + VXLAN + "}");
        parse("{\"Network\":\"10.5.0.0/16\",\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetLen\":64," + VXLAN + "}");
    }

    @Test
    void subnetRangeAsFlanneldChecksIt() {
        assertEquals(IpAddr.parse("10.5.1.0"), parse("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"0.0.0.0\"," + VXLAN + "}").subnetMin(),
                "0.0.0.0 is flanneld's unset");
        assertEquals("network config: SubnetMin: SubnetMin is not on a SubnetLen boundary: 10.5.1.7",
                refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.5.1.7\"," + VXLAN + "}", "SubnetMin"));
        assertEquals("network config: SubnetMax: SubnetMax is not on a SubnetLen boundary: 10.5.9.128",
                refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMax\":\"10.5.9.128\"," + VXLAN + "}", "SubnetMax"));
        assertEquals("network config: SubnetMin: SubnetMin is not in the range of the Network",
                refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.6.0.0\"," + VXLAN + "}", "SubnetMin"));
        assertEquals("network config: SubnetMax: SubnetMax is not in the range of the Network",
                refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMax\":\"10.6.0.0\"," + VXLAN + "}", "SubnetMax"));
        assertEquals("network config: SubnetLen: SubnetLen must be less than /31",
                refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":31," + VXLAN + "}", "SubnetLen"));
        assertTrue(refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":17," + VXLAN + "}", "SubnetLen")
                .contains("network must be able to accommodate at least four subnets"));
        assertEquals(18, parse("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":18," + VXLAN + "}").subnetLen());
        refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":-1," + VXLAN + "}", "SubnetLen");
        refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.5.9.0\",\"SubnetMax\":\"10.5.2.0\"," + VXLAN + "}", "SubnetMin");
        refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"fd00::\"," + VXLAN + "}", "SubnetMin");
    }

    @Test
    void networkAsFlanneldChecksIt() {
        String none = "please define a correct Network parameter in the flannel config";
        assertTrue(refusal("{" + VXLAN + "}", "Network").contains(none));
        assertTrue(refusal("{\"Network\":\"0.0.0.0/0\"," + VXLAN + "}", "Network").contains(none));
        refusal("{\"Network\":\"fd00::/64\"," + VXLAN + "}", "Network");
        refusal("{\"Network\":\"10.5.0.0\"," + VXLAN + "}", "Network");
        assertEquals(Cidr.parse("10.5.0.0/16"), parse("{\"Network\":\"10.5.3.4/16\"," + VXLAN + "}").network(), "masked, as Go's ParseCIDR");
    }

    /** What jcni does not implement is refused by name, with what to do about it. */
    @Test
    void refusalsNameTheKey() {
        Map<String, String> refusals = Map.ofEntries(
                Map.entry("{\"Network\":\"10.5.0.0/16\"}", "network config: Backend is missing; flanneld would use udp, which jcni does not support"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":null}", "network config: Backend is missing; flanneld would use udp, which jcni does not support"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"udp\"}}",
                        "network config: Backend.Type: udp is a flanneld backend jcni does not implement (vxlan, host-gw)"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"WireGuard\"}}",
                        "network config: Backend.Type: wireguard is a flanneld backend jcni does not implement (vxlan, host-gw)"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"foo\"}}", "network config: Backend.Type: unknown backend type: foo"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{}}", "network config: Backend.Type: unknown backend type: "),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"EnableIPv6\":true," + VXLAN + "}",
                        "network config: IPv6Network: please define a correct IPv6Network parameter in the flannel config"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"enableipv4\":false," + VXLAN + "}",
                        "network config: EnableIPv4: false with EnableIPv6 false: no family left to lease"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":0}}", "network config: Backend.VNI: out of range: 0 (1..16777215)"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":16777216}}",
                        "network config: Backend.VNI: out of range: 16777216 (1..16777215)"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"Port\":65536}}",
                        "network config: Backend.Port: out of range: 65536 (0 for the kernel's 8472, or 1..65535)"),
                Map.entry("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"MTU\":0}}",
                        "network config: Backend.MTU: out of range: 0 (118..65535: pods get it minus 50; leave it out for the underlay's)"));
        refusals.forEach((json, msg) -> assertEquals(msg, assertThrows(IllegalArgumentException.class, () -> parse(json), json).getMessage()));
    }

    /** Wrong JSON types fail as Go's decoder fails them (an int field takes only an integral literal), naming the key. */
    @Test
    void wrongTypesNameTheKey() {
        refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":\"24\"," + VXLAN + "}", "SubnetLen");
        refusal("{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":24.0," + VXLAN + "}", "SubnetLen");
        refusal("{\"Network\":10," + VXLAN + "}", "Network");
        refusal("{\"Network\":\"10.5.0.0/16\",\"Backend\":\"vxlan\"}", "Backend");
        refusal("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":\"4096\"}}", "Backend.VNI");
        refusal("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"DirectRouting\":\"true\"}}", "Backend.DirectRouting");
        refusal("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"GBP\":1}}", "Backend.GBP");
        refusal("{\"Network\":\"10.5.0.0/16\",\"EnableNFTables\":\"yes\"," + VXLAN + "}", "EnableNFTables");
        refusal("{\"Network\":\"10.5.0.0/16\",\"IPv6Network\":\"10.0.0.0/8\"," + VXLAN + "}", "IPv6Network");
        assertThrows(IllegalArgumentException.class, () -> parse("[]"));
        assertThrows(IllegalArgumentException.class, () -> parse("{"));
    }
}
