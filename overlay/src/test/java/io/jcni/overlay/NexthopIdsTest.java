package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NexthopIdsTest {

    private static NetworkConfig cfg(String json) {
        return NetworkConfig.parse(json);
    }

    @Test
    void theIdIsTheSubnetsNumberInJcnisRangeOfItsFamily() {
        NexthopIds ids = NexthopIds.of(cfg("""
                {"Network":"10.0.0.0/8","EnableIPv6":true,"IPv6Network":"fd00:10::/48","Backend":{"Type":"vxlan"}}"""));
        // 10.5.2.0/24: the 23 bits above the host part, 0x0a0502 (7 bits of the 10 with them).
        assertEquals(NexthopIds.V4_BASE + 0x0a0502, ids.id(Cidr.parse("10.5.2.0/24")));
        assertEquals(NexthopIds.V6_BASE + 0x0002, ids.id(Cidr.parse("fd00:10:0:2::/64")));
        // The same subnet, the same id, whoever asks and whenever (a restart finds its objects).
        assertEquals(ids.id(Cidr.parse("10.5.2.0/24")), NexthopIds.of(cfg("""
                {"Network":"10.0.0.0/8","Backend":{"Type":"host-gw"}}""")).id(Cidr.parse("10.5.2.0/24")));
        assertTrue(NexthopIds.owned(ids.id(Cidr.parse("10.255.255.0/24"))));
        assertTrue(NexthopIds.owned(ids.id(Cidr.parse("fd00:10:0:ffff::/64"))));
        assertFalse(NexthopIds.owned(7));
        assertFalse(NexthopIds.owned(NexthopIds.END));
        assertFalse(NexthopIds.owned(NexthopIds.V4_BASE - 1));
    }

    @Test
    void everySubnetOfANetworkGetsAnIdOfItsOwn() {
        NetworkConfig c = cfg("""
                {"Network":"10.0.0.0/8","SubnetLen":24,"EnableIPv6":true,"IPv6Network":"fd00:10::/48","Backend":{"Type":"vxlan"}}""");
        NexthopIds ids = NexthopIds.of(c);
        Set<Integer> seen = new HashSet<>();
        for (long i = 0; i < c.capacity(); i++) assertTrue(seen.add(ids.id(c.subnet(i))), "twice: " + c.subnet(i));
        for (long i = 0; i < 1 << 16; i += 97) assertTrue(seen.add(ids.id(c.v6().subnet(i))), "twice: " + c.v6().subnet(i));
        // The largest network that fits: 2^23 subnets.
        NexthopIds largest = NexthopIds.of(cfg("""
                {"Network":"10.0.0.0/7","SubnetLen":30,"Backend":{"Type":"vxlan"}}"""));
        assertEquals(NexthopIds.V4_BASE, largest.id(Cidr.parse("10.0.0.0/30")));
        assertEquals(NexthopIds.V6_BASE - 1, largest.id(Cidr.parse("11.255.255.252/30")));
    }

    @Test
    void aNetworkWithMoreSubnetsThanTheRangeGetsPlainRoutes() {
        NetworkConfig c = cfg("""
                {"Network":"10.0.0.0/8","EnableIPv6":true,"IPv6Network":"fd00::/32","Backend":{"Type":"vxlan"}}""");
        NexthopIds ids = NexthopIds.of(c);
        assertFalse(ids.coversAll(c));
        assertEquals(0, ids.id(Cidr.parse("fd00:0:0:2::/64")), "2^32 subnets: no numbering fits");
        assertEquals(NexthopIds.V4_BASE + 0x0a0502, ids.id(Cidr.parse("10.5.2.0/24")), "the other family keeps its nexthops");
        assertEquals(0, NexthopIds.NONE.id(Cidr.parse("10.5.2.0/24")));
    }
}
