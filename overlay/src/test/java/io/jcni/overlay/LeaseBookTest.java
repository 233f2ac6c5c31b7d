package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.overlay.LeaseValidator.Candidate;
import io.jcni.overlay.LeaseValidator.Checked;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The book's verdict, kept one change at a time, is always the verdict on the whole set. */
class LeaseBookTest {
    private static final NetworkConfig CFG = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
    private static final LeaseValidator.Local HOST = new LeaseValidator.Local(CFG, Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.0.1"),
            List.of(Cidr.parse("192.168.0.0/24")), "0a:00:00:00:00:01");

    @Test
    void incrementalVerdictEqualsTheWholeSetsAfterEveryChange() {
        for (int seed = 0; seed < 30; seed++) {
            Random r = new Random(seed);
            LeaseBook book = new LeaseBook();
            Map<String, Checked> truth = new HashMap<>();
            long revision = 1;
            for (int step = 0; step < 300; step++) {
                // few subnets, MACs and keys, so claims collide often
                String key = "/p/subnets/k" + r.nextInt(12);
                if (r.nextInt(4) == 0) {
                    LeaseBook.Change ch = book.remove(key);
                    if (truth.remove(key) != null) assertTrue(ch.keys().contains(key));
                } else {
                    Cidr sn = Cidr.parse("10.5." + (2 + r.nextInt(5)) + ".0/24");
                    String ip = r.nextInt(10) == 0 ? "127.0.0.1" : "192.168.0." + (10 + r.nextInt(50)); // some with a problem
                    String mac = "0a:00:00:00:00:" + (10 + r.nextInt(5));
                    Checked old = truth.get(key);
                    long created = old != null && r.nextBoolean() ? old.candidate().createRevision() : revision++;
                    Candidate c = new Candidate(key, sn, created, new Lease(sn, IpAddr.parse(ip), "vxlan", 1, mac));
                    Checked ch = new Checked(c, LeaseValidator.problem(HOST, c));
                    book.put(ch);
                    truth.put(key, ch);
                }
                LeaseValidator.Verdict want = LeaseValidator.resolve(truth.values());
                Map<Cidr, Lease> got = new HashMap<>();
                book.accepted().forEach((s, c) -> got.put(s, c.candidate().lease()));
                assertEquals(want.accepted(), got, "seed " + seed + " step " + step);
                assertEquals(want.rejected(), book.rejected(), "seed " + seed + " step " + step);
            }
        }
    }

    @Test
    void aChangeTouchesOnlyTheLeasesItCanConflictWith() {
        LeaseBook book = new LeaseBook();
        for (int i = 0; i < 200; i++) {
            Cidr sn = Cidr.parse("10.5." + (2 + i) + ".0/24");
            Candidate c = new Candidate("/p/subnets/" + i, sn, i + 1, new Lease(sn, IpAddr.parse("192.168.1." + (1 + i)), "vxlan", 1,
                    String.format("0a:00:00:00:%02x:%02x", i / 256, i % 256)));
            book.put(new Checked(c, LeaseValidator.problem(HOST, c)));
        }
        Cidr sn = Cidr.parse("10.5.7.0/24");
        Candidate rival = new Candidate("/p/subnets/rival", sn, 1000, new Lease(sn, IpAddr.parse("192.168.1.250"), "vxlan", 1, "0a:00:00:00:ff:ff"));
        LeaseBook.Change ch = book.put(new Checked(rival, null));
        assertEquals(2, ch.keys().size(), ch.keys().toString()); // the rival and the older holder of 10.5.7.0/24
        assertEquals(java.util.Set.of(sn), ch.subnets());
        assertTrue(book.rejected().get("/p/subnets/rival").contains("older lease /p/subnets/5"));
    }
}
