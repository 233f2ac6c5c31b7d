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
        assertEquals(1, c.rangeSets().size());
        ClusterIpamConfig.Range r = c.rangeSets().getFirst().ranges().getFirst();
        assertEquals(Cidr.parse("10.70.0.0/24"), r.subnet());
        assertEquals(IpAddr.parse("10.70.0.1"), r.first());
        assertEquals(IpAddr.parse("10.70.0.254"), r.last());
        assertNull(r.gateway());
        assertEquals("/jcni/ipam", c.etcdPrefix());
        assertEquals(5, c.timeout().toSeconds());
        assertEquals(100, c.retries());
        ClusterIpamConfig w = cfg("""
                {"etcdEndpoints":"http://a:1,http://b:2","range":"10.70.0.0/16","rangeStart":"10.70.0.10","rangeEnd":"10.70.0.20",
                 "gateway":"10.70.0.1","exclude":["10.70.0.12/31","10.70.0.15"],"routes":[{"dst":"0.0.0.0/0"}],"etcdPrefix":"/x/","timeout":2,"retries":7}""");
        assertEquals(List.of("http://a:1", "http://b:2"), w.etcdEndpoints());
        assertEquals("/x", w.etcdPrefix());
        assertEquals(1, w.routes().size());
        ClusterIpamConfig.Range wr = w.rangeSets().getFirst().ranges().getFirst();
        assertTrue(w.allocatable(wr, IpAddr.parse("10.70.0.10")));
        assertFalse(w.allocatable(wr, IpAddr.parse("10.70.0.13")), "excluded");
        assertFalse(w.allocatable(wr, IpAddr.parse("10.70.0.15")), "excluded single address");
        assertFalse(w.allocatable(wr, IpAddr.parse("10.70.0.21")), "above rangeEnd");
        for (String bad : new String[] {"{\"range\":\"10.70.0.0/24\"}", "{\"etcdEndpoints\":[\"http://a:1\"]}",
                "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"fd00::/127\"}", "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"gateway\":\"10.71.0.1\"}",
                "{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"retries\":0}"}) {
            assertEquals(7, assertThrows(CniException.class, () -> cfg(bad), bad).code());
        }
    }

    @Test
    void layoutAndFreeAddressChoice() {
        ClusterIpamConfig c = cfg("{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/29\",\"gateway\":\"10.70.0.1\"}");
        Attachment a = new Attachment("ctr1", "eth0");
        Cidr range = c.rangeSets().getFirst().ranges().getFirst().subnet();
        assertEquals("/jcni/ipam/10.70.0.0-29/ips/10.70.0.2", Allocations.ipKey("/jcni/ipam", range, IpAddr.parse("10.70.0.2")));
        String ok = Allocations.ownerKey("/jcni/ipam", range, a);
        assertEquals("/jcni/ipam/10.70.0.0-29/owners/ctr1/eth0", ok);
        assertEquals(a, Allocations.ownerOf("/jcni/ipam", range, ok));
        assertEquals(IpAddr.parse("10.70.0.2"), Allocations.ipOf("/jcni/ipam", range, "/jcni/ipam/10.70.0.0-29/ips/10.70.0.2"));
        Set<IpAddr> used = new HashSet<>();
        Random r = new Random(3);
        ClusterIpamConfig.RangeSet set = c.rangeSets().getFirst();
        for (int i = 0; i < 5; i++) used.add(Allocations.pickFree(c, set, used, r).orElseThrow()); // .2 .. .6: 5 usable without .1 and .7
        assertEquals(5, used.size());
        assertFalse(used.contains(IpAddr.parse("10.70.0.1")) || used.contains(IpAddr.parse("10.70.0.0")) || used.contains(IpAddr.parse("10.70.0.7")));
        assertTrue(Allocations.pickFree(c, set, used, r).isEmpty(), "full");
    }

    @Test
    void severalRangeSetsIpv6AndTheKeysOfEach() {
        ClusterIpamConfig c = cfg("""
                {"etcdEndpoints":["http://a:1"],"ranges":[[{"subnet":"10.70.0.0/24","gateway":"10.70.0.1"},{"subnet":"10.71.0.0/24"}],
                 [{"subnet":"fd00:70::/64","rangeStart":"fd00:70::10","rangeEnd":"fd00:70::1f","gateway":"fd00:70::1"}]],
                 "exclude":["fd00:70::12","fd00:70::18/125"]}""");
        assertEquals(2, c.rangeSets().size());
        assertEquals(3, c.allRanges().size());
        ClusterIpamConfig.Range v6 = c.rangeSets().get(1).ranges().getFirst();
        assertTrue(c.rangeSets().get(1).isV6());
        assertEquals(IpAddr.parse("fd00:70::1"), v6.gateway());
        assertEquals(IpAddr.parse("fd00:70::1f"), v6.last());
        assertEquals("/jcni/ipam/fd00:70::-64/ips/fd00:70::10", Allocations.ipKey("/jcni/ipam", v6.subnet(), IpAddr.parse("fd00:70::10")));
        assertEquals(v6.subnet(), Allocations.rangeOfId("fd00:70::-64"));
        assertEquals(Cidr.parse("10.71.0.0/24"), c.rangeSets().getFirst().rangeOf(IpAddr.parse("10.71.0.9")).subnet());
        // 16 addresses in the window, minus one excluded address and an excluded /125 (8): 7 left, every one found
        Set<IpAddr> used = new HashSet<>();
        Random r = new Random(5);
        for (int i = 0; i < 7; i++) used.add(Allocations.pickFree(c, c.rangeSets().get(1), used, r).orElseThrow());
        assertEquals(7, used.size());
        for (IpAddr a : used) assertTrue(v6.contains(a) && c.excludedBy(a) == null, a.toString());
        assertTrue(Allocations.pickFree(c, c.rangeSets().get(1), used, r).isEmpty(), "full");
        // the IPv4 set spans both of its ranges; the gateway is never handed out
        Set<IpAddr> v4 = new HashSet<>();
        for (int i = 0; i < 507; i++) v4.add(Allocations.pickFree(c, c.rangeSets().getFirst(), v4, r).orElseThrow());
        assertFalse(v4.contains(IpAddr.parse("10.70.0.1")));
        assertTrue(v4.contains(IpAddr.parse("10.71.0.1")) && v4.contains(IpAddr.parse("10.70.0.254")));
        assertTrue(Allocations.pickFree(c, c.rangeSets().getFirst(), v4, r).isEmpty(), "10.70.0.0/24 without its gateway (253) + 10.71.0.0/24 (254)");
    }

    @Test
    void aWholeIpv6PrefixIsWalkedWithoutCountingIt() {
        // a /64 with everything but its last /120 excluded: the walk steps over the exclude in one move
        ClusterIpamConfig c = cfg("{\"etcdEndpoints\":[\"http://a:1\"],\"ranges\":[[{\"subnet\":\"fd00:71::/64\"}]],"
                + "\"exclude\":[\"fd00:71::/65\",\"fd00:71:0:0:8000::/66\",\"fd00:71:0:0:c000::/67\"]}");
        IpAddr a = Allocations.pickFree(c, c.rangeSets().getFirst(), Set.of(), new Random(1)).orElseThrow();
        assertTrue(a.compareTo(IpAddr.parse("fd00:71:0:0:e000::")) >= 0, a.toString());
    }

    @Test
    void rangeSetRefusals() {
        for (String bad : new String[] {
                "{\"range\":\"10.70.0.0/24\",\"ranges\":[[{\"subnet\":\"10.71.0.0/24\"}]]}",
                "{\"ranges\":[[{\"subnet\":\"10.70.0.0/24\"},{\"subnet\":\"fd00::/64\"}]]}",
                "{\"ranges\":[[{\"subnet\":\"10.70.0.0/24\"}],[{\"subnet\":\"10.70.0.128/25\"}]]}",
                "{\"ranges\":[[]]}",
                "{\"ranges\":[[{\"subnet\":\"fd00::/64\",\"gateway\":\"10.70.0.1\"}]]}",
                "{\"ranges\":[[{\"subnet\":\"fd00::/64\",\"rangeStart\":\"fd00::9\",\"rangeEnd\":\"fd00::8\"}]]}",
                "{\"exclude\":[\"nonsense\"],\"range\":\"10.70.0.0/24\"}"}) {
            String conf = "{\"etcdEndpoints\":[\"http://a:1\"]," + bad.substring(1);
            assertEquals(7, assertThrows(CniException.class, () -> cfg(conf), conf).code(), conf);
        }
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
