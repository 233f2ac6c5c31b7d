package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class TcTest {

    @Test
    void tbfAsTheBandwidthPluginConfiguresIt() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("h0", "c0").up());
            int h0 = s.rt.link("h0").index();
            long rateBits = 1_000_000; // 1 Mbit/s
            long burstBits = 80_000;   // 10 kB
            TbfParams p = TbfParams.forBandwidth(rateBits, burstBits);
            s.rt.tc().addTbf(h0, p);

            Map<String, Object> q = s.tcJson("qdisc", "show", "dev", "h0").getFirst();
            assertEquals("tbf", q.get("kind"));
            assertEquals("1:", q.get("handle"));
            assertEquals("root", String.valueOf(q.get("root")).equals("true") ? "root" : q.get("parent"));
            Map<String, Object> opts = Json.asObject(q.get("options"));
            assertEquals(125_000L, ((Number) opts.get("rate")).longValue(), opts.toString());
            assertEquals(10_000L, ((Number) opts.get("burst")).longValue(), opts.toString());
            // tc prints the limit as the latency it implies: (limit - burst) / rate = 25 ms
            assertEquals(25_000L, ((Number) opts.get("lat")).longValue(), opts.toString());

            Tc.Qdisc mine = s.rt.tc().qdiscs(h0).stream().filter(x -> "tbf".equals(x.kind())).findFirst().orElseThrow();
            assertEquals(Tc.handle(1, 0), mine.handle());
            assertEquals(Tc.HANDLE_ROOT, mine.parent());
            assertNotNull(mine.tbf());
            assertEquals(p.rateBytesPerSecond(), mine.tbf().rateBytesPerSecond());
            assertEquals(p.limitBytes(), mine.tbf().limitBytes());
            assertEquals(10_000.0, (double) mine.tbf().burstBytes(), 2.0);

            ErrnoException dup = assertThrows(ErrnoException.class, () -> s.rt.tc().addTbf(h0, p));
            assertEquals(Errno.EEXIST, dup.errno());

            s.rt.tc().deleteQdisc(h0, Tc.HANDLE_ROOT);
            assertTrue(s.rt.tc().qdiscs(h0).stream().noneMatch(x -> "tbf".equals(x.kind())));
            assertTrue(s.tcJson("qdisc", "show", "dev", "h0").stream().noneMatch(x -> "tbf".equals(x.get("kind"))));
        }
    }

    @Test
    void highRatesUseTheSixtyFourBitAttribute() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("f0", "f1"));
            int f0 = s.rt.link("f0").index();
            TbfParams p = TbfParams.forBandwidth(40_000_000_000L, 8_000_000L); // 40 Gbit/s: 5e9 bytes/s > 2^32
            s.rt.tc().addTbf(f0, p);
            Tc.Qdisc q = s.rt.tc().qdiscs(f0).stream().filter(x -> "tbf".equals(x.kind())).findFirst().orElseThrow();
            assertEquals(5_000_000_000L, q.tbf().rateBytesPerSecond());
        }
    }

    @Test
    void ingressRedirectToIfbWithU32() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("host0", "cont0").up());
            s.rt.addLink(NewLink.ifb("bwp0").up());
            int host = s.rt.link("host0").index();
            int ifb = s.rt.link("bwp0").index();
            Tc tc = s.rt.tc();
            tc.addIngress(host);
            tc.addRedirectFilter(host, Tc.HANDLE_INGRESS_QDISC, ifb);
            tc.addTbf(ifb, TbfParams.forBandwidth(2_000_000, 160_000));

            assertTrue(s.tcJson("qdisc", "show", "dev", "host0").stream().anyMatch(q -> "ingress".equals(q.get("kind"))));
            String filters = Scratch.exec(List.of("tc", "-n", s.name, "filter", "show", "dev", "host0", "parent", "ffff:"));
            assertTrue(filters.contains("u32"), filters);
            assertTrue(filters.contains("flowid 1:1"), filters);
            assertTrue(filters.contains("Egress Redirect to device bwp0"), filters);
            assertTrue(filters.contains("protocol all pref 1"), filters);

            List<Tc.Filter> mine = tc.filters(host, Tc.HANDLE_INGRESS_QDISC);
            Tc.Filter withAction = mine.stream().filter(f -> f.redirectIndex() != 0).findFirst().orElseThrow();
            assertEquals("u32", withAction.kind());
            assertEquals(ifb, withAction.redirectIndex());
            assertEquals(1, withAction.priority());
            assertEquals(Tc.ETH_P_ALL, withAction.protocol());

            assertTrue(tc.qdiscs(ifb).stream().anyMatch(q -> "tbf".equals(q.kind())));
            tc.deleteQdisc(host, Tc.HANDLE_INGRESS);
            assertTrue(tc.qdiscs(host).stream().noneMatch(q -> "ingress".equals(q.kind())));
            assertEquals(Errno.EINVAL, assertThrows(ErrnoException.class,
                    () -> tc.deleteQdisc(host, Tc.HANDLE_INGRESS)).errno());
        }
    }

    @Test
    void clsactWithMatchallRedirect() {
        try (Scratch s = Scratch.create()) {
            s.rt.addLink(NewLink.veth("m0", "m1").up());
            s.rt.addLink(NewLink.ifb("mifb").up());
            int m0 = s.rt.link("m0").index();
            int ifb = s.rt.link("mifb").index();
            s.rt.tc().addClsact(m0);
            try {
                s.rt.tc().addMatchallRedirect(m0, Tc.CLSACT_INGRESS, ifb);
            } catch (ErrnoException e) {
                // Kernels built without cls_matchall answer "TC classifier not found".
                Assumptions.assumeFalse(e.is(Errno.ENOENT), "no matchall classifier in this kernel: " + e.getMessage());
                throw e;
            }
            assertTrue(s.tcJson("qdisc", "show", "dev", "m0").stream().anyMatch(q -> "clsact".equals(q.get("kind"))));
            String filters = Scratch.exec(List.of("tc", "-n", s.name, "filter", "show", "dev", "m0", "ingress"));
            assertTrue(filters.contains("matchall"), filters);
            assertTrue(filters.contains("Egress Redirect to device mifb"), filters);
            Tc.Filter f = s.rt.tc().filters(m0, Tc.CLSACT_INGRESS).stream().filter(x -> x.redirectIndex() != 0)
                    .findFirst().orElseThrow();
            assertEquals("matchall", f.kind());
            assertEquals(ifb, f.redirectIndex());
        }
    }
}
