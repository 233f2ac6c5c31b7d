package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LeaseTest {
    private static final String P = "/coreos.com/network";
    private static final Lease A = new Lease(Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.0.2"), "vxlan", 1, "0a:58:0a:05:01:00");

    @Test
    void keyAndValueAsFlanneld() {
        assertEquals("/coreos.com/network/subnets/10.5.1.0-24", Lease.key(P, A.subnet()));
        assertEquals(Cidr.parse("10.5.1.0/24"), Lease.subnetOfKey(P, "/coreos.com/network/subnets/10.5.1.0-24"));
        assertNull(Lease.subnetOfKey(P, "/coreos.com/network/config"));
        assertNull(Lease.subnetOfKey(P, "/coreos.com/network/subnets/garbage"));
        assertEquals("{\"PublicIP\":\"192.168.0.2\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\",\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"0a:58:0a:05:01:00\"}}",
                A.value());
        assertEquals(A, Lease.parse(A.subnet(), A.value()));
        Lease h = new Lease(Cidr.parse("10.5.2.0/24"), IpAddr.parse("192.168.0.3"), "host-gw", 0, null);
        assertEquals(h, Lease.parse(h.subnet(), h.value()));
        // flanneld's own value (no VNI in older versions) reads too
        Lease old = Lease.parse(A.subnet(), "{\"PublicIP\":\"192.168.0.2\",\"BackendType\":\"vxlan\",\"BackendData\":{\"VtepMAC\":\"0a:58:0a:05:01:00\"}}");
        assertEquals("0a:58:0a:05:01:00", old.vtepMac());
        assertThrows(IllegalArgumentException.class, () -> Lease.parse(A.subnet(), "{\"PublicIP\":\"x\"}"));
        assertThrows(IllegalArgumentException.class, () -> Lease.parse(A.subnet(), "{\"PublicIP\":\"1.2.3.4\",\"BackendType\":\"vxlan\"}"));
    }

    @Test
    void choiceKeepsOwnLeaseThenPreviousThenRandomFree() {
        NetworkConfig cfg = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
        assertEquals(A, SubnetChoice.ownLease(List.of(A), IpAddr.parse("192.168.0.2")).orElseThrow());
        assertTrue(SubnetChoice.ownLease(List.of(A), IpAddr.parse("192.168.0.9")).isEmpty());
        assertEquals(Cidr.parse("10.5.7.0/24"), SubnetChoice.pick(cfg, List.of(A), Cidr.parse("10.5.7.1/24"), List.of(), new Random(1)).orElseThrow());
        Cidr p = SubnetChoice.pick(cfg, List.of(A), Cidr.parse("10.5.1.0/24"), List.of(), new Random(1)).orElseThrow();
        assertTrue(cfg.leasable(p) && !p.equals(A.subnet()), "previous taken: another free one");
        for (int seed = 0; seed < 50; seed++) {
            Cidr c = SubnetChoice.pick(cfg, List.of(A), null, List.of(), new Random(seed)).orElseThrow();
            assertTrue(cfg.leasable(c) && !c.equals(A.subnet()));
            assertTrue(c.address().compareTo(IpAddr.parse("10.5.101.0")) <= 0, "among the first 100 free");
        }
        // never a subnet over the underlay, not even the previous one
        NetworkConfig wide = NetworkConfig.parse("{\"Network\":\"192.168.0.0/16\",\"SubnetMin\":\"192.168.77.0\",\"SubnetMax\":\"192.168.78.0\",\"Backend\":{\"Type\":\"vxlan\"}}");
        List<Cidr> underlay = List.of(Cidr.parse("192.168.77.0/24"));
        for (int seed = 0; seed < 10; seed++) {
            assertEquals(Cidr.parse("192.168.78.0/24"), SubnetChoice.pick(wide, List.of(), Cidr.parse("192.168.77.0/24"), underlay, new Random(seed)).orElseThrow());
        }
        NetworkConfig tiny = NetworkConfig.parse("{\"Network\":\"10.5.0.0/23\",\"Backend\":{\"Type\":\"vxlan\"}}");
        List<Lease> full = List.of(lease("10.5.0.128/25"), lease("10.5.1.0/25"), lease("10.5.1.128/25"));
        assertTrue(SubnetChoice.pick(tiny, full, null, List.of(), new Random()).isEmpty());
    }

    @Test
    void diffRemovesGoneAndChangedAndAddsNew() {
        Lease b = lease("10.5.2.0/24"), c = lease("10.5.3.0/24");
        Lease b2 = new Lease(b.subnet(), IpAddr.parse("192.168.0.99"), "vxlan", 1, "0a:00:00:00:00:99");
        LeaseDiff d = LeaseDiff.between(Map.of(A.subnet(), A, b.subnet(), b), Map.of(b.subnet(), b2, c.subnet(), c));
        assertEquals(List.of(A, b), d.removes().stream().sorted((x, y) -> x.subnet().address().compareTo(y.subnet().address())).toList());
        assertEquals(2, d.adds().size());
        assertTrue(d.adds().contains(b2) && d.adds().contains(c));
        assertTrue(LeaseDiff.between(Map.of(A.subnet(), A), Map.of(A.subnet(), A)).isEmpty());
    }

    private static Lease lease(String subnet) {
        return new Lease(Cidr.parse(subnet), IpAddr.parse("192.168.0.50"), "vxlan", 1, "0a:00:00:00:00:01");
    }
}
