package io.jcni.plugins.common.ip;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.Route;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.common.link.Veth;
import io.jcni.plugins.common.nft.IpMasq;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class CommonHelpersTest {

    @Test
    void randomVethNamesLookLikeUpstreams() {
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            String n = Veth.randomName();
            assertTrue(n.matches("veth[0-9a-f]{8}"), n);
            seen.add(n);
        }
        assertTrue(seen.size() > 45);
    }

    @Test
    void mtu() {
        assertEquals(0, NetConfs.mtu(Json.parseObject("{}")));
        assertEquals(1400, NetConfs.mtu(Json.parseObject("{\"mtu\":1400}")));
        assertTrue(assertThrows(CniException.class, () -> NetConfs.mtu(Json.parseObject("{\"mtu\":\"x\"}"))).msg().contains("'mtu'"));
        assertTrue(assertThrows(CniException.class, () -> NetConfs.mtu(Json.parseObject("{\"mtu\":1.5}"))).msg().contains("'mtu'"));
        assertThrows(CniException.class, () -> NetConfs.mtu(Json.parseObject("{\"mtu\":-1}")));
    }

    @Test
    void ipamTypeAndIpMasq() {
        assertNull(NetConfs.ipamType(Json.parseObject("{}")));
        assertNull(NetConfs.ipamType(Json.parseObject("{\"ipam\":{}}")));
        assertEquals("host-local", NetConfs.ipamType(Json.parseObject("{\"ipam\":{\"type\":\"host-local\"}}")));
        assertThrows(CniException.class, () -> NetConfs.requireIpamType(Json.parseObject("{}")));
        assertNull(IpMasq.of(Json.parseObject("{\"ipMasq\":false}")));
        assertNotNull(IpMasq.of(Json.parseObject("{\"ipMasq\":true,\"ipMasqBackend\":\"iptables\"}")));
        CniException e = assertThrows(CniException.class, () -> IpMasq.of(Json.parseObject("{\"ipMasq\":\"sure\"}")));
        assertEquals(6, e.code());
        assertTrue(e.getMessage().contains("ipMasq"), e.getMessage());
    }

    @Test
    void resultRoutesBecomeKernelRoutes() {
        Route r = Iface.toRoute(new Result.Route(Cidr.parse("10.0.0.0/8"), null, 1400, 1360, 50, 100, 253), 7, IpAddr.parse("10.1.0.1"));
        assertEquals(7, r.oif());
        assertEquals("10.1.0.1", r.gateway().toString());
        assertEquals(1400, r.mtu());
        assertEquals(1360, r.advmss());
        assertEquals(50, r.priority());
        assertEquals(100, r.table());
        assertEquals(253, r.scope());
        Route plain = Iface.toRoute(new Result.Route(Cidr.parse("0.0.0.0/0"), IpAddr.parse("10.1.0.1")), 3, IpAddr.parse("10.1.0.1"));
        assertTrue(plain.isDefault());
        assertEquals(-1, plain.table());
    }

    @Test
    void hostPrefixesForHostRoutesAndRules() {
        assertEquals("10.1.2.3/32", Cidr.host(IpAddr.parse("10.1.2.3")).toString());
        assertEquals("fd00::1/128", Cidr.host(IpAddr.parse("fd00::1")).toString());
    }
}
