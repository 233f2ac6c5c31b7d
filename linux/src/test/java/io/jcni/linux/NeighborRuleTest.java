package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class NeighborRuleTest {

    @Test
    void permanentArpAndNdpEntries() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("n0", "n1").up());
            int n0 = s.rt.link("n0").index();
            MacAddress mac4 = MacAddress.parse("02:00:00:00:00:04");
            MacAddress mac6 = MacAddress.parse("02:00:00:00:00:06");
            s.rt.addNeighbor(Neighbor.permanent(n0, IpAddr.parse("10.1.1.9"), mac4));
            s.rt.addNeighbor(Neighbor.permanent(n0, IpAddr.parse("fd00:1::9"), mac6));

            Map<String, Object> j = s.ipJson("neigh", "show", "dev", "n0", "to", "10.1.1.9").getFirst();
            assertEquals("02:00:00:00:00:04", j.get("lladdr"));
            assertEquals(List.of("PERMANENT"), j.get("state"));
            assertEquals("02:00:00:00:00:06", s.ipJson("-6", "neigh", "show", "dev", "n0", "to", "fd00:1::9").getFirst().get("lladdr"));

            Neighbor n = s.rt.neighbors(n0, Family.INET).stream()
                    .filter(x -> IpAddr.parse("10.1.1.9").equals(x.address())).findFirst().orElseThrow();
            assertEquals(mac4, n.mac());
            assertEquals(Neighbor.NUD_PERMANENT, n.state());
            assertTrue(s.rt.neighbors(n0, Family.INET6).stream().anyMatch(x -> mac6.equals(x.mac())));

            ErrnoException dup = assertThrows(ErrnoException.class,
                    () -> s.rt.addNeighbor(Neighbor.permanent(n0, IpAddr.parse("10.1.1.9"), mac6)));
            assertEquals(Errno.EEXIST, dup.errno());
            s.rt.replaceNeighbor(Neighbor.permanent(n0, IpAddr.parse("10.1.1.9"), mac6));
            assertEquals("02:00:00:00:00:06", s.ipJson("neigh", "show", "dev", "n0", "to", "10.1.1.9").getFirst().get("lladdr"));

            s.rt.deleteNeighbor(Neighbor.permanent(n0, IpAddr.parse("10.1.1.9"), null));
            assertEquals(List.of(), s.ipJson("neigh", "show", "dev", "n0", "to", "10.1.1.9"));
            ErrnoException gone = assertThrows(ErrnoException.class,
                    () -> s.rt.deleteNeighbor(Neighbor.permanent(n0, IpAddr.parse("10.1.1.9"), null)));
            assertEquals(Errno.ENOENT, gone.errno());
        }
    }

    @Test
    void vxlanFdbEntries() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("u0", "u1").up());
            int u0 = s.rt.link("u0").index();
            s.rt.addAddress(u0, IpAddr.parse("192.0.2.1"), 24, false);
            s.rt.addLink(NewLink.vxlan("vx1", 1).vxlanLocal(IpAddr.parse("192.0.2.1")).vxlanDev(u0).vxlanPort(4789)
                    .vxlanLearning(false));
            int vx = s.rt.link("vx1").index();
            MacAddress remoteMac = MacAddress.parse("0a:58:0a:00:01:02");
            MacAddress zero = MacAddress.parse("00:00:00:00:00:00");

            s.rt.addFdb(Neighbor.fdb(vx, remoteMac, IpAddr.parse("192.0.2.2")));
            s.rt.appendFdb(Neighbor.fdb(vx, zero, IpAddr.parse("192.0.2.2")));
            s.rt.appendFdb(Neighbor.fdb(vx, zero, IpAddr.parse("192.0.2.3")));

            String bridge = Scratch.exec(List.of("bridge", "-n", s.name, "fdb", "show", "dev", "vx1"));
            assertTrue(bridge.contains("0a:58:0a:00:01:02 dst 192.0.2.2 self permanent"), bridge);
            assertTrue(bridge.contains("00:00:00:00:00:00 dst 192.0.2.3 self permanent"), bridge);

            List<Neighbor> fdb = s.rt.fdb(vx);
            assertTrue(fdb.stream().anyMatch(e -> remoteMac.equals(e.mac()) && IpAddr.parse("192.0.2.2").equals(e.address())
                    && (e.flags() & Neighbor.NTF_SELF) != 0), fdb.toString());
            assertEquals(2, fdb.stream().filter(e -> zero.equals(e.mac())).count(), fdb.toString());

            ErrnoException dup = assertThrows(ErrnoException.class,
                    () -> s.rt.addFdb(Neighbor.fdb(vx, remoteMac, IpAddr.parse("192.0.2.2"))));
            assertEquals(Errno.EEXIST, dup.errno());
            s.rt.deleteFdb(Neighbor.fdb(vx, remoteMac, IpAddr.parse("192.0.2.2")));
            assertTrue(s.rt.fdb(vx).stream().noneMatch(e -> remoteMac.equals(e.mac())));
        }
    }

    @Test
    void sourceBasedRoutingRules() {
        try (Scratch s = Scratch.create()) {
            Rule v4 = Rule.from(Cidr.parse("10.22.0.5/32"), 100).priority(1000);
            Rule v6 = Rule.from(Cidr.parse("fd00:22::5/128"), 100).priority(1000);
            s.rt.addRule(v4);
            s.rt.addRule(v6);
            s.rt.addRule(Rule.to(Cidr.parse("10.99.0.0/16"), 300).priority(1001).iif("lo"));

            String rules = s.ip("rule", "show");
            assertTrue(rules.contains("1000:\tfrom 10.22.0.5 lookup 100"), rules);
            assertTrue(rules.contains("1001:\tfrom all to 10.99.0.0/16 iif lo lookup 300"), rules);
            assertTrue(s.ip("-6", "rule", "show").contains("1000:\tfrom fd00:22::5 lookup 100"));

            List<Rule> mine = s.rt.rules(Family.INET);
            Rule got = mine.stream().filter(r -> r.priority() == 1000).findFirst().orElseThrow();
            assertEquals(Cidr.parse("10.22.0.5/32"), got.src());
            assertEquals(100, got.table());
            assertEquals(Rule.ACTION_TO_TABLE, got.action());
            assertTrue(mine.stream().anyMatch(r -> r.priority() == 32766 && r.table() == Route.TABLE_MAIN));
            Rule to = mine.stream().filter(r -> r.priority() == 1001).findFirst().orElseThrow();
            assertEquals("lo", to.iif());
            assertEquals(Cidr.parse("10.99.0.0/16"), to.dst());

            assertEquals(Errno.EEXIST, assertThrows(ErrnoException.class, () -> s.rt.addRule(v4)).errno());
            s.rt.deleteRule(v4);
            s.rt.deleteRule(v6);
            assertTrue(s.rt.rules(Family.INET).stream().noneMatch(r -> r.priority() == 1000));
            assertTrue(s.rt.rules(Family.INET6).stream().noneMatch(r -> r.priority() == 1000));
            assertEquals(Errno.ENOENT, assertThrows(ErrnoException.class, () -> s.rt.deleteRule(v4)).errno());
        }
    }
}
