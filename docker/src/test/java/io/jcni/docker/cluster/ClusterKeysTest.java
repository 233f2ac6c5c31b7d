package io.jcni.docker.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.DamagedStateException;
import io.jcni.types.StateDoc;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClusterKeysTest {

    @Test
    void keyLayout() {
        assertEquals("clusters/web", ClusterKeys.cluster("web"));
        assertEquals("clusters/web/hosts", ClusterKeys.hosts("web"));
        assertEquals("clusters/web/endpoints", ClusterKeys.endpoints("web"));
        assertEquals("10.0.0.2", ClusterKeys.host(IpAddr.parse("10.0.0.2")));
        assertEquals("fd00__2", ClusterKeys.host(IpAddr.parse("fd00::2"))); // no ':' in a key segment
        assertEquals(Optional.of("web"), ClusterKeys.clusterOf("/jcni/docker", "/jcni/docker/clusters/web/endpoints/abc"));
        assertEquals(Optional.of("web"), ClusterKeys.clusterOf("/jcni/docker", "/jcni/docker/clusters/web"));
        assertEquals(Optional.empty(), ClusterKeys.clusterOf("/jcni/docker", "/jcni/docker/vnis/4096"));
        assertEquals(Optional.empty(), ClusterKeys.clusterOf("/jcni/docker", "/other/clusters/web/pool"));
        assertTrue(ClusterKeys.NAME.matcher("prod-net.1").matches());
        assertFalse(ClusterKeys.NAME.matcher("a/b").matches());
        assertFalse(ClusterKeys.NAME.matcher("").matches());
    }

    @Test
    void vniCandidatesStayInTheirSpanAndDiffer() {
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int v = ClusterKeys.vniCandidate("web", i);
            assertTrue(v >= ClusterKeys.FIRST_VNI && v < ClusterKeys.FIRST_VNI + ClusterKeys.VNI_SPAN && v < (1 << 24), "vni " + v);
            seen.add(v);
        }
        assertEquals(50, seen.size());
        assertEquals(ClusterKeys.FIRST_VNI, ClusterKeys.vniCandidate("web", ClusterKeys.FIRST_VNI + ClusterKeys.VNI_SPAN - ClusterKeys.firstVniFor("web")));
        assertTrue(ClusterKeys.vxlanDevice((1 << 24) - 1).length() <= 15);
    }

    @Test
    void macFollowsTheAddress() {
        assertEquals("02:6a:0a:4d:03:01", ClusterKeys.macFor(IpAddr.parse("10.77.3.1")));
    }

    @Test
    void definitionsThatDifferAreNamed() {
        ClusterNetwork a = ClusterPoolTest.def("web");
        assertEquals(List.of(), a.differences(a.withVni(0)));
        ClusterNetwork b = new ClusterNetwork("web", 0, new ClusterNetwork.Subnet(Cidr.parse("10.78.0.0/16"), a.v4().range(), IpAddr.parse("10.77.0.254")), null, true);
        List<String> d = a.differences(b);
        assertEquals(3, d.size(), d.toString());
        assertTrue(d.get(0).startsWith("subnet 10.78.0.0/16"), d.toString());
        assertEquals(a, ClusterNetwork.fromJson(StateDoc.of("t", a.toJson())));
    }

    @Test
    void theIPv6PartOfDefinitionsIsComparedToo() {
        ClusterNetwork v4only = ClusterPoolTest.def("web"), dual = ClusterPoolTest.dualStack("web");
        assertEquals(List.of(), dual.differences(dual.withVni(0)));
        assertEquals(List.of("IPv6 subnet fd77::/64 (the cluster network has no IPv6)"), v4only.differences(dual));
        assertEquals(List.of("no IPv6 subnet (the cluster network has fd77::/64)"), dual.differences(v4only));
        ClusterNetwork other = new ClusterNetwork("web", 0, dual.v4(),
                new ClusterNetwork.Subnet(Cidr.parse("fd78::/64"), Cidr.parse("fd78::/64"), IpAddr.parse("fd78::1")), false);
        assertEquals(List.of("IPv6 subnet fd78::/64 (the cluster network has fd77::/64)", "IPv6 ip-range fd78::/64 (the cluster network has fd77::100/120)",
                "IPv6 gateway fd78::1 (the cluster network has fd77::1)"), dual.differences(other));
        // Through the document: an IPv4-only definition (also one written before IPv6) has no IPv6 keys and reads back without IPv6.
        assertEquals(dual, ClusterNetwork.fromJson(StateDoc.of("t", dual.toJson())));
        assertFalse(v4only.toJson().containsKey("subnet6"));
        assertNull(ClusterNetwork.fromJson(StateDoc.of("t", v4only.toJson())).v6());
    }

    @Test
    void aDefinitionWithItsFamiliesSwappedIsDamaged() {
        Map<String, Object> doc = new LinkedHashMap<>(ClusterPoolTest.dualStack("web").toJson());
        doc.put("subnet6", "10.9.0.0/16");
        doc.put("range6", "10.9.0.0/16");
        String damaged = assertThrows(DamagedStateException.class, () -> ClusterNetwork.fromJson(StateDoc.of("t", doc))).getMessage();
        assertTrue(damaged.contains("subnet6"), damaged);
    }
}
