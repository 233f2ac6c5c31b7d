package io.jcni.daemon.dhcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.ErrnoException;
import io.jcni.testfixtures.Dirs;
import io.jcni.types.IpAddr;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lease keeper with a fake server: acquire, persist, reload in a "restarted" keeper, renew, rebind, release, GC. */
class DhcpLeasesTest {
    @TempDir
    Path dir;

    final FakeServer server = new FakeServer();
    final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
    final PrintStream log = new PrintStream(logBytes, true);
    boolean gone;

    final List<String> downed = new java.util.ArrayList<>();

    DhcpLeases keeper() throws Exception {
        return new DhcpLeases(new LeaseStore(dir), log, new DhcpLeases.Opener() {
            @Override
            public DhcpLeases.Opened open(String netns, String ifname) {
                if (gone) throw new ErrnoException(2, "open " + netns);
                return new DhcpLeases.Opened(server, new byte[] {2, 0, 0, 0, 0, 1});
            }

            @Override
            public void down(String netns, String ifname) {
                downed.add(netns + " " + ifname);
            }
        }, server::clock);
    }

    static DhcpLeases.Acquire add(String cid) {
        return new DhcpLeases.Acquire(cid, "net", "eth0", "/run/netns/x", List.of(1, 3), Map.of(), 5_000);
    }

    @Test
    void aLeaseSurvivesARestartAndIsRenewed() throws Exception {
        Lease l;
        try (DhcpLeases k = keeper()) {
            l = k.acquire(add("c1"));
            assertEquals("10.9.0.50/24", l.cidr().toString());
            assertEquals(IpAddr.parse("10.9.0.1"), l.gateway());
            assertSame(l, k.acquire(add("c1")), "a second ADD returns the lease it has");
        }
        assertEquals(1, Dirs.count(dir));

        try (DhcpLeases k = keeper()) { // "jcnid restarted"
            assertEquals(1, k.reload());
            assertEquals(l.address(), k.get(l.clientId()).address());
            server.sent.clear();
            server.now = l.times().renewAt(); // T1
            k.maintain(l.clientId());
            assertEquals(List.of(DhcpOptions.REQUEST), server.sentTypes());
            assertEquals(new IpAddr(FakeServer.SERVER), new IpAddr(server.sent.getFirst().to()), "renewing: unicast");
            assertTrue(k.get(l.clientId()).times().renewAt() > l.times().renewAt(), "new times after the ACK");
        }
    }

    @Test
    void theFileIsRewrittenOnlyWhenItWouldSaySomethingNew() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c7"));
            Path file = new LeaseStore(dir).fileOf(l.clientId());
            String first = Files.readString(file);
            // T1 4 s of a 120 s lease: renewals every 4 s change only the times, the recorded lease is far from half used.
            for (int i = 0; i < 10; i++) {
                server.now = k.get(l.clientId()).times().renewAt();
                k.maintain(l.clientId());
            }
            assertEquals(first, Files.readString(file), "not rewritten");
            server.now = l.times().boundAt() + 60_000; // half the recorded lease gone by
            server.now = Math.max(server.now, k.get(l.clientId()).times().renewAt());
            k.maintain(l.clientId());
            Lease now = k.get(l.clientId());
            assertTrue(Files.readString(file).contains("\"renewAt\": " + now.times().renewAt()), "rewritten with the times");
            server.now = now.times().renewAt();
            server.ackOptions.put(DhcpOptions.DNS_SERVERS, new byte[] {10, 9, 0, 53});
            k.maintain(l.clientId());
            assertTrue(Files.readString(file).contains("\"6\": \"0a090035\""), "a new option: rewritten at once");
            // The renewal lines: the first, then at most one a minute.
            long renewed = logBytes.toString().lines().filter(x -> x.contains(" renewed ")).count();
            assertTrue(renewed <= 3, logBytes.toString());
        }
    }

    @Test
    void aT1OfZeroDoesNotRenewAtOnce() throws Exception {
        server.ackOptions.put(DhcpOptions.RENEWAL_TIME, DhcpOptions.u32(0));
        server.ackOptions.put(DhcpOptions.REBINDING_TIME, DhcpOptions.u32(0));
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c8"));
            assertEquals(l.times().boundAt() + 60_000, l.times().renewAt());
            server.sent.clear();
            server.now = l.times().renewAt();
            k.maintain(l.clientId());
            k.maintain(l.clientId()); // a timer firing early: nothing is due
            assertEquals(List.of(DhcpOptions.REQUEST), server.sentTypes());
        }
    }

    @Test
    void aZeroLeaseIsRefusedAtAddAndReleased() throws Exception {
        server.ackOptions.put(DhcpOptions.LEASE_TIME, DhcpOptions.u32(0));
        try (DhcpLeases k = keeper()) {
            DhcpException e = assertThrows(DhcpException.class, () -> k.acquire(add("c9")));
            assertEquals("the DHCP server 10.9.0.1 granted 10.9.0.50 for 0 seconds (option 51): refused and released", e.getMessage());
            assertEquals(DhcpOptions.RELEASE, server.sent.getLast().message().type());
            assertEquals(0, k.size());
            assertEquals(0, Dirs.count(dir));
            assertTrue(downed.isEmpty());
        }
    }

    @Test
    void aNakAndAnotherAddressLeavesTheContainerDownNotOnAnAddressNobodyHolds() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c10"));
            server.sent.clear();
            server.naks = 1;
            server.offered = new byte[] {10, 9, 1, 77}; // the LAN was renumbered
            server.now = l.times().renewAt();
            k.maintain(l.clientId());
            assertEquals(List.of(DhcpOptions.REQUEST, DhcpOptions.DISCOVER, DhcpOptions.REQUEST, DhcpOptions.RELEASE), server.sentTypes());
            assertEquals(new IpAddr(server.offered), new IpAddr(server.sent.getLast().message().ciaddr()), "the new address given back");
            assertNull(k.get(l.clientId()), "jcnid holds nothing in the container's name");
            assertEquals(List.of("/run/netns/x eth0"), downed, "the container is not left on 10.9.0.50");
            assertEquals(0, Dirs.count(dir));
            assertTrue(logBytes.toString().contains("lost address=10.9.0.50"), logBytes.toString());
        }
    }

    @Test
    void aRebindAckWithAnotherAddressLeavesTheContainerDown() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c11"));
            server.sent.clear();
            server.offered = new byte[] {10, 9, 1, 78};
            server.now = l.times().rebindAt();
            k.maintain(l.clientId());
            assertEquals(new IpAddr(DhcpMessage.BROADCAST), new IpAddr(server.sent.getFirst().to()), "rebinding");
            assertEquals(DhcpOptions.RELEASE, server.sent.getLast().message().type());
            assertNull(k.get(l.clientId()));
            assertEquals(List.of("/run/netns/x eth0"), downed);
        }
    }

    @Test
    void aReloadedLeaseWhoseRecordExpiredIsReboundBeforeItIsGivenUp() throws Exception {
        Lease l;
        try (DhcpLeases k = keeper()) {
            l = k.acquire(add("c12"));
        }
        server.now = l.times().expiresAt() + 1000; // jcnid was down longer than the recorded lease
        server.sent.clear();
        try (DhcpLeases k = keeper()) {
            k.reload(); // due at once: on the keeper's timer thread
            for (int i = 0; i < 100 && k.get(l.clientId()).times().expiresAt() < server.now; i++) Thread.sleep(50);
            assertEquals(List.of(DhcpOptions.REQUEST), server.sentTypes());
            assertEquals(new IpAddr(DhcpMessage.BROADCAST), new IpAddr(server.sent.getFirst().to()));
            assertTrue(k.get(l.clientId()).times().expiresAt() > server.now, "still held");
            assertTrue(downed.isEmpty());
        }
        server.now = Long.MAX_VALUE / 2;
        server.ignore.add(DhcpOptions.REQUEST);
        try (DhcpLeases k = keeper()) {
            k.reload();
            for (int i = 0; i < 100 && k.get(l.clientId()) != null; i++) Thread.sleep(50); // the expiry follows on the timer thread
            assertNull(k.get(l.clientId()));
            assertEquals(List.of("/run/netns/x eth0"), downed);
        }
    }

    @Test
    void unansweredRenewalRetriesThenRebindsThenExpires() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c2"));
            server.ignore.add(DhcpOptions.REQUEST);
            server.now = l.times().renewAt();
            k.maintain(l.clientId());
            String log = logBytes.toString();
            assertTrue(log.contains("renew_failed"), log);
            // The renewal ran into T2: the rebinding follows at once (on the keeper's timer thread), broadcast.
            for (int i = 0; i < 100 && !logBytes.toString().contains("rebind_failed"); i++) Thread.sleep(50);
            assertTrue(logBytes.toString().contains("rebind_failed"), logBytes.toString());
            assertEquals(new IpAddr(DhcpMessage.BROADCAST), new IpAddr(server.sent.getLast().to()), "rebinding: broadcast");
            server.now = l.times().expiresAt();
            k.maintain(l.clientId());
            assertNull(k.get(l.clientId()));
            assertEquals(0, Dirs.count(dir));
            assertEquals(List.of("/run/netns/x eth0"), downed, "an expired lease takes its interface down");
        }
    }

    @Test
    void aNakOnRenewalAcquiresAgain() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c6"));
            server.sent.clear();
            server.naks = 1;
            server.now = l.times().renewAt();
            k.maintain(l.clientId());
            assertEquals(List.of(DhcpOptions.REQUEST, DhcpOptions.DISCOVER, DhcpOptions.REQUEST), server.sentTypes());
            assertEquals(new IpAddr(FakeServer.OFFERED), new IpAddr(server.sent.get(1).message().option(DhcpOptions.REQUESTED_IP)),
                    "INIT again, asking for the address the container has");
            assertTrue(k.get(l.clientId()).times().renewAt() > l.times().renewAt());
            assertTrue(logBytes.toString().contains("asking for 10.9.0.50 again"), logBytes.toString());
            assertTrue(downed.isEmpty(), "granted again: the container goes on");
        }
    }

    @Test
    void releaseSendsReleaseAndForgets() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c3"));
            k.release(l.clientId());
            assertEquals(DhcpOptions.RELEASE, server.sent.getLast().message().type());
            assertNull(k.get(l.clientId()));
            assertEquals(0, Dirs.count(dir));
            k.release(l.clientId()); // DEL is idempotent
        }
    }

    @Test
    void releaseSucceedsWhenTheNamespaceIsGone() throws Exception {
        try (DhcpLeases k = keeper()) {
            Lease l = k.acquire(add("c4"));
            gone = true;
            k.release(l.clientId());
            assertNull(k.get(l.clientId()));
            assertTrue(logBytes.toString().contains("release_skipped"), logBytes.toString());
        }
    }

    @Test
    void gcReleasesOnlyLeasesOfGoneAttachmentsOfItsNetwork() throws Exception {
        try (DhcpLeases k = keeper()) {
            k.acquire(add("keep"));
            k.acquire(add("drop"));
            k.acquire(new DhcpLeases.Acquire("other", "net2", "eth0", "/x", List.of(), Map.of(), 5000));
            assertEquals(List.of(ClientIdentity.clientId("drop", "net", "eth0")), k.collect("net", Set.of(List.of("keep", "eth0"))));
            assertEquals(2, k.size());
        }
    }

    @Test
    void noServerFailsAndLeavesNothing() throws Exception {
        server.ignore.add(DhcpOptions.DISCOVER);
        try (DhcpLeases k = keeper()) {
            DhcpException e = assertThrows(DhcpException.class, () -> k.acquire(add("c5")));
            assertTrue(e.getMessage().contains("no DHCPOFFER"), e.getMessage());
            assertEquals(0, k.size());
            assertEquals(0, Dirs.count(dir));
            assertTrue(server.closed, "the socket is closed");
        }
    }
}
