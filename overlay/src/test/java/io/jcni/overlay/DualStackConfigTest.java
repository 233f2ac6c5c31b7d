package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The IPv6 keys of net-conf.json, checked with flanneld's CheckNetworkConfig rules and messages. */
class DualStackConfigTest {
    private static final String VXLAN = "\"Backend\":{\"Type\":\"vxlan\"}";

    @Test
    void dualStackDefaultsAsFlanneld() {
        NetworkConfig c = NetworkConfig.parse("{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\"," + VXLAN + "}");
        assertTrue(c.ipv4() && c.ipv6());
        assertEquals(Cidr.parse("fd00:10:244::/56"), c.v6().network());
        assertEquals(64, c.v6().subnetLen(), "flanneld's default for networks of /62 or larger");
        assertEquals(IpAddr.parse("fd00:10:244:1::"), c.v6().subnetMin(), "the first subnet is skipped");
        assertEquals(IpAddr.parse("fd00:10:244:ff::"), c.v6().subnetMax());
        assertEquals(255, c.v6().capacity());
        assertEquals(Cidr.parse("fd00:10:244:2::/64"), c.v6().subnet(1));
        assertTrue(c.leasable(Cidr.parse("fd00:10:244:7::/64")));
        assertFalse(c.leasable(Cidr.parse("fd00:10:244::/64")), "below IPv6SubnetMin");
        assertFalse(c.leasable(Cidr.parse("fd00:10:244:7::/80")));
        assertEquals(1450, ((NetworkConfig.Vxlan) c.backend()).podMtu(1500));
        assertEquals(1430, ((NetworkConfig.Vxlan) c.backend()).podMtuV6(1500), "an IPv6 outer header is 20 bytes longer");
        assertEquals("flannel-v6.1", ((NetworkConfig.Vxlan) c.backend()).deviceV6());
    }

    @Test
    void subnetLenDefaultsForSmallNetworksAndCaseInsensitiveKeys() {
        NetworkConfig c = NetworkConfig.parse("{\"network\":\"10.5.0.0/16\",\"enableipv6\":true,\"ipv6network\":\"fd00::/100\"," + VXLAN + "}");
        assertEquals(102, c.v6().subnetLen(), "network's length + 2 below /62");
        NetworkConfig given = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00::/48\",\"IPv6SubnetLen\":80,"
                + "\"IPv6SubnetMin\":\"fd00:0:0:5::\",\"IPv6SubnetMax\":\"fd00:0:0:9::\"," + VXLAN + "}");
        assertEquals(80, given.v6().subnetLen());
        assertEquals(IpAddr.parse("fd00:0:0:5::"), given.v6().subnetMin());
        assertEquals(Long.MAX_VALUE > given.v6().capacity(), true);
        NetworkConfig unset = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMin\":\"::\","
                + VXLAN + "}");
        assertEquals(IpAddr.parse("fd00:0:0:1::"), unset.v6().subnetMin(), ":: is unset, as flanneld's ip.IsEmpty");
    }

    @Test
    void ipv6Only() {
        NetworkConfig c = NetworkConfig.parse("{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:20::/56\"," + VXLAN + "}");
        assertFalse(c.ipv4());
        assertNull(c.network());
        assertTrue(c.ipv6());
        assertFalse(c.leasable(Cidr.parse("10.5.1.0/24")));
    }

    @Test
    void withoutEnableIPv6TheKeysAreOnlyDecoded() {
        NetworkConfig c = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetLen\":200," + VXLAN + "}");
        assertFalse(c.ipv6());
    }

    @Test
    void refusalsAsFlanneld() {
        String net = "\"Network\":\"10.5.0.0/16\",\"EnableIPv6\":true,";
        Map<String, String> refusals = Map.ofEntries(
                Map.entry("{" + net + VXLAN + "}", "network config: IPv6Network: please define a correct IPv6Network parameter in the flannel config"),
                Map.entry("{" + net + "\"IPv6Network\":\"::/0\"," + VXLAN + "}",
                        "network config: IPv6Network: please define a correct IPv6Network parameter in the flannel config"),
                Map.entry("{" + net + "\"IPv6Network\":\"10.0.0.0/8\"," + VXLAN + "}", "network config: IPv6Network: not an IPv6 CIDR: 10.0.0.0/8"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/125\"," + VXLAN + "}",
                        "network config: IPv6Network: IPv6Network is too small. Minimum useful network prefix is /124"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetLen\":127," + VXLAN + "}",
                        "network config: IPv6SubnetLen: SubnetLen must be less than /127"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetLen\":57," + VXLAN + "}",
                        "network config: IPv6SubnetLen: network must be able to accommodate at least four subnets (IPv6SubnetLen 57 in fd00::/56)"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMin\":\"fd01::\"," + VXLAN + "}",
                        "network config: IPv6SubnetMin: IPv6SubnetMin is not in the range of the IPv6Network"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMax\":\"fd01::\"," + VXLAN + "}",
                        "network config: IPv6SubnetMax: IPv6SubnetMax is not in the range of the IPv6Network"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMin\":\"fd00:0:0:1::1\"," + VXLAN + "}",
                        "network config: IPv6SubnetMin: IPv6SubnetMin is not on a SubnetLen boundary: fd00:0:0:1::1"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMin\":\"10.0.0.1\"," + VXLAN + "}",
                        "network config: IPv6SubnetMin: not an IPv6 address: 10.0.0.1"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetMin\":\"fd00:0:0:9::\",\"IPv6SubnetMax\":\"fd00:0:0:5::\"," + VXLAN + "}",
                        "network config: IPv6SubnetMin: fd00:0:0:9:: is above IPv6SubnetMax fd00:0:0:5::: no subnet could be leased"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"Backend\":{\"Type\":\"vxlan\",\"MTU\":1300}}",
                        "network config: Backend.MTU: 1300 is too small with EnableIPv6 (at least 1350: pods get it minus 70, and IPv6 needs 1280)"),
                Map.entry("{\"EnableIPv4\":false," + VXLAN + "}", "network config: EnableIPv4: false with EnableIPv6 false: no family left to lease"),
                Map.entry("{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00::/56\",\"Network\":\"fd00::/8\"," + VXLAN + "}",
                        "network config: Network: not an IPv4 CIDR: fd00::/8"),
                Map.entry("{" + net + "\"IPv6Network\":\"fd00::/56\",\"IPv6SubnetLen\":\"64\"," + VXLAN + "}",
                        "network config: invalid type for 'IPv6SubnetLen': expected an integer, got string"));
        refusals.forEach((json, msg) -> assertEquals(msg, assertThrows(IllegalArgumentException.class, () -> NetworkConfig.parse(json), json).getMessage(),
                json));
    }
}
