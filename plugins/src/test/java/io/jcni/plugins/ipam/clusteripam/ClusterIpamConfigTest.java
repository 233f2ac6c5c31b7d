package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterIpamConfigTest {
    private static ClusterIpamConfig cfg(String ipam) {
        return ClusterIpamConfig.parse(Json.parseObject("{\"name\":\"n\",\"ipam\":" + ipam + "}"));
    }

    @Test
    void parsesWithDefaults() {
        ClusterIpamConfig c = cfg("{\"type\":\"cluster-ipam\",\"etcdEndpoints\":[\"http://10.0.0.1:2379\"],\"range\":\"10.70.0.5/24\"}");
        assertEquals(Cidr.parse("10.70.0.0/24"), c.range());
        assertEquals(IpAddr.parse("10.70.0.1"), c.first());
        assertEquals(IpAddr.parse("10.70.0.254"), c.last());
        assertNull(c.gateway());
        assertEquals("/jcni/ipam", c.etcdPrefix());
        assertEquals(5, c.timeout().toSeconds());
        assertEquals(100, c.retries());
        ClusterIpamConfig w = cfg("""
                {"etcdEndpoints":"http://a:1,http://b:2","range":"10.70.0.0/16","rangeStart":"10.70.0.10","rangeEnd":"10.70.0.20",
                 "gateway":"10.70.0.1","exclude":["10.70.0.12/31","10.70.0.15"],"routes":[{"dst":"0.0.0.0/0"}],"etcdPrefix":"/x/","timeout":2,"retries":7}""");
        assertEquals(List.of("http://a:1", "http://b:2"), w.etcdEndpoints());
        assertEquals("/x", w.etcdPrefix());
        assertEquals(1, w.routes().size());
        assertTrue(w.allocatable(IpAddr.parse("10.70.0.10")));
        assertFalse(w.allocatable(IpAddr.parse("10.70.0.13")), "excluded");
        assertFalse(w.allocatable(IpAddr.parse("10.70.0.15")), "excluded single address");
        assertFalse(w.allocatable(IpAddr.parse("10.70.0.21")), "above rangeEnd");
        for (String bad : new String[] {"{\"range\":\"10.70.0.0/24\"}", "{\"etcdEndpoints\":[\"http://a:1\"]}",
                "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"fd00::/64\"}", "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"gateway\":\"10.71.0.1\"}",
                "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"retries\":0}"}) {
            assertEquals(7, assertThrows(CniException.class, () -> cfg(bad), bad).code());
        }
    }

    @Test
    void layoutAndFreeAddressChoice() {
        ClusterIpamConfig c = cfg("{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/29\",\"gateway\":\"10.70.0.1\"}");
        Attachment a = new Attachment("ctr1", "eth0");
        assertEquals("/jcni/ipam/10.70.0.0-29/ips/10.70.0.2", Allocations.ipKey("/jcni/ipam", c.range(), IpAddr.parse("10.70.0.2")));
        String ok = Allocations.ownerKey("/jcni/ipam", c.range(), a);
        assertEquals("/jcni/ipam/10.70.0.0-29/owners/ctr1/eth0", ok);
        assertEquals(a, Allocations.ownerOf("/jcni/ipam", c.range(), ok));
        assertEquals(IpAddr.parse("10.70.0.2"), Allocations.ipOf("/jcni/ipam", c.range(), "/jcni/ipam/10.70.0.0-29/ips/10.70.0.2"));
        Set<IpAddr> used = new HashSet<>();
        Random r = new Random(3);
        for (int i = 0; i < 5; i++) used.add(Allocations.pickFree(c, used, r).orElseThrow()); // .2 .. .6: 5 usable without .1 and .7
        assertEquals(5, used.size());
        assertFalse(used.contains(IpAddr.parse("10.70.0.1")) || used.contains(IpAddr.parse("10.70.0.0")) || used.contains(IpAddr.parse("10.70.0.7")));
        assertTrue(Allocations.pickFree(c, used, r).isEmpty(), "full");
    }

    @Test
    void etcdDownIsTryAgainLaterInBoundedTime() {
        // a port nothing listens on: connection refused at once, so the error is immediate
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"x\",\"ipam\":{\"type\":\"cluster-ipam\","
                + "\"etcdEndpoints\":[\"http://127.0.0.1:1\"],\"range\":\"10.70.0.0/24\",\"timeout\":1}}";
        var err = new PluginCall("cluster-ipam").fails("ADD", conf);
        assertEquals(11L, err.get("code"), err.toString());
        assertTrue(String.valueOf(err.get("msg")).contains("etcd unreachable"), err.toString());
        assertEquals(50L, new PluginCall("cluster-ipam").fails("STATUS", conf.replace("1.0.0", "1.1.0")).get("code"));
    }
}
