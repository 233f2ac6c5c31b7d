package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import org.junit.jupiter.api.Test;

class NetworkConfigTest {
    @Test
    void defaultsAsFlanneld() {
        NetworkConfig c = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\"}");
        assertEquals(Cidr.parse("10.5.0.0/16"), c.network());
        assertEquals(24, c.subnetLen());
        assertEquals(IpAddr.parse("10.5.1.0"), c.subnetMin(), "the first subnet is skipped");
        assertEquals(IpAddr.parse("10.5.255.0"), c.subnetMax());
        assertEquals(255, c.capacity());
        assertEquals(new NetworkConfig.Vxlan(1, 8472), c.backend());
        assertEquals("flannel.1", ((NetworkConfig.Vxlan) c.backend()).device());
        assertEquals(50, c.backend().overhead());
    }

    @Test
    void smallNetworksGetSubnetsTwoBitsLonger() {
        NetworkConfig c = NetworkConfig.parse("{\"Network\":\"10.5.0.0/23\"}");
        assertEquals(25, c.subnetLen());
        assertEquals(IpAddr.parse("10.5.0.128"), c.subnetMin());
        assertEquals(3, c.capacity());
    }

    @Test
    void explicitValuesAndBackends() {
        NetworkConfig c = NetworkConfig.parse("""
                {"Network":"10.0.0.0/8","SubnetLen":20,"SubnetMin":"10.10.0.0","SubnetMax":"10.99.0.0",
                 "Backend":{"Type":"vxlan","VNI":42,"Port":4789}}""");
        assertEquals(20, c.subnetLen());
        assertEquals(new NetworkConfig.Vxlan(42, 4789), c.backend());
        assertEquals(Cidr.parse("10.10.0.0/20"), c.subnet(0));
        assertEquals(Cidr.parse("10.10.16.0/20"), c.subnet(1));
        assertTrue(c.leasable(Cidr.parse("10.99.0.0/20")));
        assertFalse(c.leasable(Cidr.parse("10.99.16.0/20")), "above SubnetMax");
        assertFalse(c.leasable(Cidr.parse("10.10.0.0/24")), "wrong length");
        NetworkConfig h = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}");
        assertEquals(new NetworkConfig.HostGw(), h.backend());
        assertEquals(0, h.backend().overhead());
    }

    @Test
    void rejectsWhatFlanneldRejects() {
        for (String bad : new String[] {"{}", "[]", "{\"Network\":\"fd00::/64\"}", "{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":8}",
                "{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.6.0.0\"}", "{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"udp\"}}",
                "{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.5.9.0\",\"SubnetMax\":\"10.5.2.0\"}",
                "{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":0}}", "{\"Network\":\"10.5.0.0/16\",\"SubnetLen\":\"24\"}"}) {
            assertThrows(IllegalArgumentException.class, () -> NetworkConfig.parse(bad), bad);
        }
    }
}
