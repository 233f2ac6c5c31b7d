package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The windows of a range that cluster-ipam lists instead of all of it: their key prefix and the choice inside one. */
class AllocationsWindowTest {
    private static ClusterIpamConfig cfg(String ipam) {
        return ClusterIpamConfig.parse(Json.parseObject("{\"name\":\"n\",\"ipam\":" + ipam + "}"));
    }

    @Test
    void aWindowsKeyPrefixHoldsItsAddressesAndNoOther() {
        Cidr range = Cidr.parse("10.72.0.0/20");
        String w = Allocations.windowPrefix("/lab", range, IpAddr.parse("10.72.3.77"));
        assertEquals("/lab/10.72.0.0-20/ips/10.72.3.", w);
        for (String ip : new String[] {"10.72.3.0", "10.72.3.1", "10.72.3.99", "10.72.3.255"}) {
            assertTrue(Allocations.ipKey("/lab", range, IpAddr.parse(ip)).startsWith(w), ip);
        }
        for (String ip : new String[] {"10.72.31.5", "10.72.30.1", "10.72.2.255", "10.72.4.0", "10.72.13.3"}) {
            assertFalse(Allocations.ipKey("/lab", range, IpAddr.parse(ip)).startsWith(w), ip);
        }
        assertNull(Allocations.windowPrefix("/lab", Cidr.parse("fd00:72::/112"), IpAddr.parse("fd00:72::5")), "IPv6: no window");
    }

    @Test
    void aWindowGivesEachFreeAddressOfItsPartOfTheRangeThenNone() {
        ClusterIpamConfig c = cfg("""
                {"type":"cluster-ipam","etcdEndpoints":["http://127.0.0.1:2379"],"range":"10.72.0.0/22","rangeStart":"10.72.1.10",
                 "exclude":["10.72.1.20/30"]}""");
        ClusterIpamConfig.Range r = c.rangeSets().getFirst().ranges().getFirst();
        Set<IpAddr> taken = new HashSet<>();
        Random random = new Random(7);
        IpAddr inside = IpAddr.parse("10.72.1.100");
        for (int i = 0; i < 500; i++) {
            var a = Allocations.pickFreeInWindow(c, r, inside, taken::contains, random);
            if (a.isEmpty()) break;
            assertTrue(taken.add(a.get()), "each address once");
        }
        // 10.72.1.10 .. 10.72.1.255 is 246 addresses, less the 4 excluded ones
        assertEquals(242, taken.size());
        for (IpAddr a : taken) {
            String s = a.toString();
            assertTrue(s.startsWith("10.72.1."), s);
            assertTrue(a.compareTo(IpAddr.parse("10.72.1.10")) >= 0, s + ": before the range's start");
            assertTrue(c.allocatable(r, a), s + ": excluded");
        }
        assertTrue(Allocations.pickFreeInWindow(c, r, IpAddr.parse("10.72.1.3"), taken::contains, random).isEmpty(), "the window is full");
        IpAddr lastWindow = Allocations.pickFreeInWindow(c, r, IpAddr.parse("10.72.3.1"), a -> false, random).orElseThrow();
        assertTrue(lastWindow.toString().startsWith("10.72.3.") && !lastWindow.equals(IpAddr.parse("10.72.3.255")),
                lastWindow + ": the last window, without the broadcast address");
        assertTrue(Allocations.pickFreeInWindow(c, r, IpAddr.parse("fd00::1"), a -> false, random).isEmpty(), "IPv6: none");
    }
}
