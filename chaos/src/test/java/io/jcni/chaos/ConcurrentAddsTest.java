package io.jcni.chaos;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Jcnid;
import io.jcni.testkit.World;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * 500 containers ADDed to one full-chain network at the same moment, through the installed shims
 * and jcnid (500 standalone JVMs at once would not fit the machine): every ADD succeeds with an
 * address of its own; then 500 concurrent DELs leave nothing in any category of {@link Leaks}.
 */
@Tag("root")
class ConcurrentAddsTest {
    static Installed jcni;

    @BeforeAll
    static void install() throws Exception {
        jcni = Installed.get();
    }

    @Test
    void concurrentAddsGetDistinctAddressesAndConcurrentDelsLeaveNothing() throws Exception {
        int n = Chaos.size("concurrent", 150, 500);
        long t0 = System.nanoTime();
        try (World w = new World(); ExecutorService pool = Executors.newFixedThreadPool(n)) {
            ChainNetwork net = new ChainNetwork(w, jcni);
            HostRuntime rt = new HostRuntime(net);
            List<String> netns = Collections.synchronizedList(new ArrayList<>());
            try (ExecutorService creators = Executors.newFixedThreadPool(8)) {
                List<Future<String>> made = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int c = i;
                    made.add(creators.submit(() -> w.container(c)));
                }
                for (Future<String> f : made) netns.add(f.get());
            }
            try (Jcnid jcnid = Jcnid.start(jcni, w.dir.resolve("jcnid.log"), "--max-in-flight", Integer.toString(4 * n))) {
                long a0 = System.nanoTime();
                List<Future<Result>> adds = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int c = i;
                    adds.add(pool.submit(() -> rt.add(c, netns.get(c))));
                }
                List<String> failures = new ArrayList<>();
                List<String> addresses = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    try {
                        Result r = adds.get(i).get(600, TimeUnit.SECONDS);
                        addresses.add(r.ips().getFirst().address().toString());
                    } catch (Exception e) {
                        failures.add("ADD " + i + ": " + e);
                    }
                }
                String addTime = Chaos.seconds(a0);
                Set<String> distinct = new HashSet<>(addresses);
                Leaks attached = Leaks.count(net, netns);

                long d0 = System.nanoTime();
                List<Future<?>> dels = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int c = i;
                    dels.add(pool.submit(() -> rt.del(c, netns.get(c))));
                }
                for (int i = 0; i < n; i++) {
                    try {
                        dels.get(i).get(600, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        failures.add("DEL " + i + ": " + e);
                    }
                }
                String delTime = Chaos.seconds(d0);
                Leaks left = Leaks.count(net, netns);
                System.out.printf("chaos concurrent: %d ADDs (%s), %d failed, %d distinct addresses, %d duplicates; attached: %s;"
                        + " %d DELs (%s); left: %s; %s%n", n, addTime, failures.size(), distinct.size(),
                        addresses.size() - distinct.size(), attached, n, delTime, left, Chaos.seconds(t0));
                assertEquals(List.of(), failures.stream().limit(20).toList(), failures.size() + " operations failed");
                assertEquals(n, distinct.size(), "distinct addresses");
                assertEquals(n, attached.addresses(), "one reservation per container: " + attached);
                assertEquals(new Leaks(0, 0, 0, 0, 0, 0), left, "left after every DEL: " + Leaks.fileNames(net).stream().limit(30).toList());
            }
        }
    }
}
