package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One service's failure or hang never reaches another, nor the daemon's health answer. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostedServicesTest {

    /** A fake service: start throws what it is given, or runs; status blocks while {@code wedge} is closed. */
    static class Fake implements DaemonService {
        final String flag;
        final Exception failure;
        final CountDownLatch wedge;
        final AtomicInteger closed = new AtomicInteger();
        final AtomicInteger statusCalls = new AtomicInteger();
        List<String> gotArgs;

        Fake(String flag, Exception failure, CountDownLatch wedge) {
            this.flag = flag;
            this.failure = failure;
            this.wedge = wedge;
        }

        @Override
        public String enableFlag() {
            return flag;
        }

        @Override
        public Set<String> valueFlags() {
            return Set.of(flag + "-dir");
        }

        @Override
        public Set<String> switchFlags() {
            return Set.of(flag);
        }

        @Override
        public Running start(List<String> args, PrintStream log) throws Exception {
            gotArgs = args;
            if (failure != null) throw failure;
            return new Running() {
                @Override
                public String status() {
                    statusCalls.incrementAndGet();
                    try {
                        if (wedge != null) wedge.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return flag.substring(2) + "_line 1\n";
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                }
            };
        }
    }

    private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
    private final PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);

    @Test
    void aServiceThatFailsToStartIsReportedAndTheOthersRun() {
        Fake ok = new Fake("--alpha", null, null);
        Fake broken = new Fake("--beta", new NoSuchFileException("/var/lib/x/networks.json", null, "damaged\nstate"), null);
        Fake after = new Fake("--gamma", null, null);
        Fake off = new Fake("--delta", null, null);
        HostedServices s = HostedServices.of(List.of(ok, broken, after, off),
                List.of("--alpha", "--beta", "--beta-dir", "/d", "--gamma"));
        assertTrue(s.status().startsWith("services starting\n"), s.status());
        s.startAll(log);
        assertEquals(List.of("--beta", "--beta-dir", "/d"), broken.gotArgs, "each service gets its own flags");
        assertEquals("""
                services failed 1 of 3
                service alpha running
                alpha_line 1
                service beta failed: /var/lib/x/networks.json: damaged state
                service gamma running
                gamma_line 1
                """, s.status());
        assertEquals(List.of("beta failed: /var/lib/x/networks.json: damaged state"), s.failures());
        assertEquals(List.of("beta failed: /var/lib/x/networks.json: damaged state"), DaemonControl.failedServices("status ok\n" + s.status()));
        assertTrue(logBytes.toString(StandardCharsets.UTF_8).contains("jcnid service=beta failed="), logBytes.toString(StandardCharsets.UTF_8));
        s.stop(log);
        assertEquals(1, ok.closed.get());
        assertEquals(1, after.closed.get());
        assertEquals(0, off.closed.get());
    }

    @Test
    void servicesStartSideBySideSoASlowStartHoldsNoOtherBack() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        Fake slow = new Fake("--alpha", null, null) {
            @Override
            public Running start(List<String> args, PrintStream log) throws Exception {
                assertTrue(release.await(30, TimeUnit.SECONDS));
                return super.start(args, log);
            }
        };
        Fake quick = new Fake("--beta", null, null);
        HostedServices s = HostedServices.of(List.of(slow, quick), List.of("--alpha", "--beta"));
        Thread starter = Thread.ofPlatform().start(() -> s.startAll(log));
        for (int i = 0; i < 1000 && !s.status().contains("service beta running"); i++) Thread.sleep(10);
        assertEquals("services starting\nservice alpha starting\nservice beta running\nbeta_line 1\n", s.status());
        release.countDown();
        starter.join(30_000);
        assertFalse(starter.isAlive());
        assertEquals("services ok 2\nservice alpha running\nalpha_line 1\nservice beta running\nbeta_line 1\n", s.status());
        s.stop(log);
        assertEquals(1, slow.closed.get());
    }

    @Test
    void aServiceWhoseStatusHangsIsStalledAndHoldsNothingElseUp() throws InterruptedException {
        CountDownLatch wedge = new CountDownLatch(1);
        Fake hung = new Fake("--alpha", null, wedge);
        Fake ok = new Fake("--beta", null, null);
        HostedServices s = HostedServices.of(List.of(hung, ok), List.of("--alpha", "--beta"));
        s.startAll(log);
        for (int i = 0; i < 3; i++) {
            assertEquals("services ok 2\nservice alpha stalled: its status did not answer within 1 s\nservice beta running\nbeta_line 1\n",
                    s.status());
        }
        assertEquals(1, hung.statusCalls.get(), "a stalled status gets no second thread");
        wedge.countDown();
        // The pending call ends a moment after the wedge opens; until then it is still stalled.
        for (int i = 0; i < 500 && s.status().contains("stalled"); i++) Thread.sleep(10);
        assertEquals("services ok 2\nservice alpha running\nalpha_line 1\nservice beta running\nbeta_line 1\n", s.status());
        s.stop(log);
    }

    @Test
    void aStatusThatThrowsIsShownNotPropagated() {
        DaemonService throwing = new Fake("--alpha", null, null) {
            @Override
            public Running start(java.util.List<String> args, PrintStream log) {
                return new Running() {
                    @Override
                    public String status() {
                        throw new IllegalStateException("store\nunreadable");
                    }

                    @Override
                    public void close() {}
                };
            }
        };
        HostedServices s = HostedServices.of(List.of(throwing), List.of("--alpha"));
        s.startAll(log);
        assertEquals("services ok 1\nservice alpha running\nstatus_error \"store unreadable\"\n", s.status());
    }

    @Test
    void aServiceThatSaysItStalledIsShownStalled() {
        DaemonService stuck = new Fake("--alpha", null, null) {
            @Override
            public Running start(java.util.List<String> args, PrintStream log) {
                return new Running() {
                    @Override
                    public String status() {
                        return "alpha_line 1\n";
                    }

                    @Override
                    public String stalled() {
                        return "3 requests waiting, the oldest for 12 s";
                    }

                    @Override
                    public void close() {}
                };
            }
        };
        HostedServices s = HostedServices.of(List.of(stuck), List.of("--alpha"));
        s.startAll(log);
        assertEquals("services ok 1\nservice alpha stalled: 3 requests waiting, the oldest for 12 s\nalpha_line 1\n", s.status());
    }

    @Test
    void noServicesNoLines() {
        HostedServices s = HostedServices.of(List.of(new Fake("--alpha", null, null)), List.of());
        s.startAll(log);
        assertEquals("", s.status());
        assertEquals("", HostedServices.none().status());
    }

    @Test
    void aStopWhileStartingClosesWhatStartedAndStartsNothingMore() {
        Fake late = new Fake("--beta", null, null);
        HostedServices s = HostedServices.of(List.of(late), List.of("--beta"));
        s.stop(log);
        s.startAll(log);
        assertEquals(0, late.closed.get());
        assertEquals(List.of("beta failed: jcnid stopped before the service started"), s.failures());
    }
}
