package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** The retry of a remote subnet whose programming failed, against a dataplane that fails on demand; time passed in. */
class RemoteProgrammingTest {
    private static final long S = 1_000_000_000L;
    private static final Lease A = lease("10.5.1.0/24", "192.168.0.2", "0a:00:00:00:00:01");
    private static final Lease A2 = lease("10.5.1.0/24", "192.168.0.9", "0a:00:00:00:00:09"); // A's host came back with a new VTEP
    private static final Lease B = lease("10.5.2.0/24", "192.168.0.3", "0a:00:00:00:00:02");

    private static Lease lease(String subnet, String ip, String mac) {
        return new Lease(Cidr.parse(subnet), IpAddr.parse(ip), "vxlan", 1, mac);
    }

    /** A dataplane whose next adds and removes fail with the queued errors; records the calls that reached it. */
    static final class FlakyDataplane implements RemoteProgramming.Target {
        final Deque<String> addFailures = new ArrayDeque<>(), removeFailures = new ArrayDeque<>();
        final List<String> calls = new ArrayList<>();
        boolean foreignRoute;

        @Override
        public boolean add(Lease remote) {
            calls.add("add " + remote.publicIp());
            String e = addFailures.poll();
            if (e != null) throw new IllegalStateException(e);
            return !foreignRoute;
        }

        @Override
        public void remove(Lease remote) {
            calls.add("remove " + remote.publicIp());
            String e = removeFailures.poll();
            if (e != null) throw new IllegalStateException(e);
        }
    }

    private final FlakyDataplane dp = new FlakyDataplane();
    private final ByteArrayOutputStream logged = new ByteArrayOutputStream();
    private final RandomGenerator noJitter = () -> 0L;
    private final RemoteProgramming programming = new RemoteProgramming(dp, new AgentLog(new PrintStream(logged, true, StandardCharsets.UTF_8)), noJitter);
    private final Map<Cidr, Lease> wanted = new HashMap<>();

    private String log() {
        return logged.toString(StandardCharsets.UTF_8);
    }

    private static int count(String text, String part) {
        return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
    }

    private void want(Lease... leases) {
        for (Lease l : leases) wanted.put(l.id(), l);
        programming.apply(LeaseDiff.between(new HashMap<>(programming.programmed()), wanted), 0);
    }

    private int retry(long nowNanos) {
        return programming.retryDue(wanted::get, nowNanos);
    }

    @Test
    void aFailedAddIsRetriedWithADoublingDelayUntilItSucceedsAndLoggedOnce() {
        want(B);
        for (int i = 0; i < 3; i++) dp.addFailures.add("RTM_NEWROUTE: No buffer space available (ENOBUFS)");
        want(A);
        assertEquals(Map.of(B.id(), B), programming.programmed());
        assertEquals(Set.of(A.id()), programming.failing());

        // 1 s, then 2 s, then 4 s after each failure; nothing before its time
        long t = 0;
        for (long delay : new long[] {1, 2, 4}) {
            assertEquals(0, retry(t + delay * S - 1), "not before its time");
            t += delay * S;
            assertEquals(1, retry(t));
        }
        assertEquals(Map.of(A.id(), A, B.id(), B), programming.programmed());
        assertTrue(programming.failing().isEmpty());
        assertEquals(4, count(String.join("\n", dp.calls), "add 192.168.0.2"), "the first try and three retries");
        assertEquals(1, count(log(), "msg=\"adding a remote failed; retrying\" subnet=10.5.1.0/24"), "one line for one kind of failure\n" + log());
        assertTrue(log().contains("msg=\"remote programmed after failing\" subnet=10.5.1.0/24 failures=3"), log());
        assertEquals(0, retry(t + 1000 * S), "nothing left to retry");
    }

    @Test
    void eachKindOfFailureIsLoggedOnce() {
        dp.addFailures.addAll(List.of("EBUSY", "EBUSY", "ENOBUFS", "ENOBUFS", "EBUSY"));
        want(A);
        long t = 0;
        for (int i = 0; i < 5; i++) {
            t += 60 * S; // past any delay
            retry(t);
        }
        assertTrue(programming.failing().isEmpty());
        assertEquals(3, count(log(), "msg=\"adding a remote failed; retrying\""), "EBUSY, ENOBUFS, EBUSY again: a change of kind is logged\n" + log());
        assertTrue(log().contains("failures=5"), log());
    }

    @Test
    void theDelayIsCappedAt30sAndStartsOverAfterASuccess() {
        for (int i = 0; i < 8; i++) dp.addFailures.add("ENODEV");
        want(A);
        long t = 0;
        for (long delay : new long[] {1, 2, 4, 8, 16, 30, 30}) {
            assertEquals(0, retry(t + delay * S - 1));
            t += delay * S;
            assertEquals(1, retry(t));
        }
        t += 30 * S;
        assertEquals(1, retry(t));
        assertEquals(Map.of(A.id(), A), programming.programmed());

        dp.removeFailures.add("ENOBUFS");
        wanted.clear();
        programming.apply(LeaseDiff.between(new HashMap<>(programming.programmed()), wanted), t);
        assertEquals(0, retry(t + S - 1), "after a success the next failure waits 1 s again");
        assertEquals(1, retry(t + S));
        assertTrue(programming.programmed().isEmpty(), "removed on its retry");
    }

    @Test
    void aLeaseNoLongerAcceptedIsNotProgrammedByItsRetry() {
        dp.addFailures.add("ENOBUFS");
        want(A);
        wanted.remove(A.id()); // its lease expired meanwhile; the event found nothing to change
        assertEquals(1, retry(S));
        assertEquals(List.of("add 192.168.0.2"), dp.calls, "no second add");
        assertTrue(programming.programmed().isEmpty());
        assertTrue(programming.failing().isEmpty(), "forgotten");
    }

    @Test
    void aFailedRemoveIsRetriedUnlessTheLeaseIsWantedAgain() {
        want(A, B);
        dp.removeFailures.addAll(List.of("EBUSY", "EBUSY"));
        wanted.clear();
        programming.apply(LeaseDiff.between(new HashMap<>(programming.programmed()), wanted), 0);
        assertEquals(Set.of(A.id(), B.id()), programming.failing());

        wanted.put(A.id(), A); // A's host renewed in time: its entries must stay
        assertEquals(2, retry(S));
        assertEquals(Map.of(A.id(), A), programming.programmed(), "A kept, B removed");
        assertEquals(1, count(String.join("\n", dp.calls), "remove 192.168.0.2"), "A's remove not tried again");
        assertTrue(programming.failing().isEmpty());
    }

    @Test
    void aChangedLeaseWhoseRemoveFailedIsReplacedWholeByItsRetry() {
        want(A);
        dp.removeFailures.add("EBUSY");
        want(A2);
        assertEquals(List.of("add 192.168.0.2", "remove 192.168.0.2"), dp.calls, "the new lease is not added over the old one's entries");
        assertEquals(Map.of(A.id(), A), programming.programmed());
        assertEquals(1, retry(S));
        assertEquals(List.of("add 192.168.0.2", "remove 192.168.0.2", "remove 192.168.0.2", "add 192.168.0.9"), dp.calls);
        assertEquals(Map.of(A2.id(), A2), programming.programmed());
        assertTrue(programming.failing().isEmpty());
    }

    @Test
    void aRouteJcniDidNotInstallIsNoFailureToRetry() {
        dp.addFailures.add("ENOBUFS");
        want(A);
        dp.foreignRoute = true; // an operator's route holds A's subnet now
        assertEquals(1, retry(S));
        assertTrue(programming.failing().isEmpty());
        assertTrue(programming.programmed().isEmpty());
        assertEquals(0, retry(1000 * S));
        assertEquals(2, dp.calls.size(), "left alone: " + dp.calls);
        assertTrue(log().contains("a route jcni did not install holds its subnet"), log());
    }
    // ------------------------------------------------------------------ remotes the kernel lost (RemoteCheck's findings)

    @Test
    void aRemoteTheKernelLostIsAddedAgainAndItsRecoveryLoggedOnce() {
        want(A, B);
        dp.calls.clear();
        assertEquals(1, programming.recover(Map.of(A.id(), EnumSet.of(RemoteCheck.Missing.ROUTE)), 10 * S));
        assertEquals(List.of("add 192.168.0.2"), dp.calls, "through the add, nothing removed");
        assertEquals(Map.of(A.id(), A, B.id(), B), programming.programmed());
        assertEquals(1, count(log(), "msg=\"remote recovered\" subnet=10.5.1.0/24 missing=route\n"), log());
        assertEquals(1, count(log(), "msg=\"added remote\" subnet=10.5.1.0/24"), "the recovery is not another add line\n" + log());
        assertEquals(0, programming.recover(Map.of(), 20 * S));
    }

    @Test
    void aRecoveryThatFailsIsRetriedWithTheBackOffAndLoggedOnce() {
        want(A);
        for (int i = 0; i < 3; i++) dp.addFailures.add("RTM_NEWNEXTHOP: Network is down (ENETDOWN)"); // the link is still down
        Map<Cidr, Set<RemoteCheck.Missing>> lost = Map.of(A.id(), EnumSet.of(RemoteCheck.Missing.ROUTE, RemoteCheck.Missing.NEXTHOP, RemoteCheck.Missing.NEIGHBOUR));
        long t = 10 * S;
        assertEquals(1, programming.recover(lost, t));
        assertTrue(programming.programmed().isEmpty(), "no longer taken for programmed: its retry adds it");
        assertEquals(Set.of(A.id()), programming.failing());
        assertEquals(0, programming.recover(lost, t + S / 2), "the next check leaves a failing subnet to its retry");
        for (long delay : new long[] {1, 2, 4}) {
            assertEquals(0, retry(t + delay * S - 1));
            t += delay * S;
            assertEquals(1, retry(t));
        }
        assertEquals(Map.of(A.id(), A), programming.programmed());
        assertEquals(1, count(log(), "msg=\"adding a remote failed; retrying\""), "one line, not one per retry\n" + log());
        assertEquals(1, count(log(), "msg=\"remote recovered\" subnet=10.5.1.0/24 missing=route,nexthop,neighbour"), log());
        assertTrue(log().contains("msg=\"remote programmed after failing\" subnet=10.5.1.0/24 failures=3"), log());
    }

    @Test
    void aLostRemoteWhoseLeaseWentMeanwhileIsNotAddedAgain() {
        want(A);
        dp.addFailures.add("ENETDOWN");
        programming.recover(Map.of(A.id(), EnumSet.of(RemoteCheck.Missing.ROUTE)), 0);
        wanted.remove(A.id()); // the lease expired before the link came back
        assertEquals(1, retry(S));
        assertTrue(programming.programmed().isEmpty());
        assertTrue(programming.failing().isEmpty());
        want(A); // the host is back later: an ordinary add, no recovery
        assertEquals(0, count(log(), "msg=\"remote recovered\""), log());
        assertEquals(2, count(log(), "msg=\"added remote\" subnet=10.5.1.0/24"), log());
    }

    @Test
    void aLostRemoteWhoseSubnetAForeignRouteHoldsNowIsLeftAlone() {
        want(A);
        dp.foreignRoute = true; // an operator routed A's subnet by hand meanwhile (the check itself skips such a family; this is the race)
        programming.recover(Map.of(A.id(), EnumSet.of(RemoteCheck.Missing.NEIGHBOUR)), 0);
        assertTrue(programming.programmed().isEmpty());
        assertTrue(programming.failing().isEmpty(), "nothing to retry");
        assertTrue(log().contains("a route jcni did not install holds its subnet"), log());
    }
}
