package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Group commit's batching, without etcd: a fake sender records what went out together. */
class GroupCommitTest {
    record Txn(String name, Set<String> puts) implements GroupCommit.Part {}

    /** Answers each part with "name:alone" or "name:in-N" (N: the request's size); the first request can be held. */
    static final class FakeSender implements GroupCommit.Sender<Txn, String> {
        final List<List<String>> requests = new CopyOnWriteArrayList<>();
        final CountDownLatch firstArrived = new CountDownLatch(1);
        volatile CountDownLatch releaseFirst = new CountDownLatch(0);
        volatile EtcdException refuseTogether;
        volatile IOException failTogether;

        private void arrived() throws IOException {
            boolean first = requests.size() == 1;
            firstArrived.countDown();
            if (first) {
                try {
                    if (!releaseFirst.await(30, TimeUnit.SECONDS)) throw new IOException("never released");
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
            }
        }

        @Override
        public String alone(Txn part) throws IOException {
            requests.add(List.of(part.name()));
            arrived();
            return part.name() + ":alone";
        }

        @Override
        public List<String> together(List<Txn> parts) throws IOException {
            List<String> names = new ArrayList<>();
            for (Txn t : parts) names.add(t.name());
            requests.add(names);
            arrived();
            if (refuseTogether != null) throw refuseTogether;
            if (failTogether != null) throw failTogether;
            List<String> out = new ArrayList<>();
            for (Txn t : parts) out.add(t.name() + ":in-" + parts.size());
            return out;
        }
    }

    /** Starts a caller per part once a first request is in flight, each queued before the next starts; then lets the first go. */
    private static Map<String, Object> behindAHeldRequest(GroupCommit<Txn, String> gc, FakeSender sender, List<Txn> parts) throws Exception {
        Map<String, Object> outcomes = new ConcurrentHashMap<>();
        sender.releaseFirst = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        threads.add(Thread.ofVirtual().start(() -> call(gc, new Txn("first", Set.of("/first")), outcomes)));
        assertTrue(sender.firstArrived.await(30, TimeUnit.SECONDS));
        for (int n = 0; n < parts.size(); n++) { // one at a time, so they queue in this order
            Txn t = parts.get(n);
            threads.add(Thread.ofVirtual().start(() -> call(gc, t, outcomes)));
            for (int i = 0; i < 3000 && gc.waiting() <= n; i++) Thread.sleep(10);
            assertEquals(n + 1, gc.waiting(), "the caller queued behind the request in flight");
        }
        sender.releaseFirst.countDown();
        for (Thread t : threads) t.join(30_000);
        return outcomes;
    }

    private static void call(GroupCommit<Txn, String> gc, Txn t, Map<String, Object> outcomes) {
        try {
            outcomes.put(t.name(), gc.submit(t));
        } catch (IOException e) {
            outcomes.put(t.name(), e);
        }
    }

    @Test
    void aLoneTransactionGoesAsItIs() throws IOException {
        FakeSender sender = new FakeSender();
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        assertEquals("a:alone", gc.submit(new Txn("a", Set.of("/a"))));
        assertEquals("b:alone", gc.submit(new Txn("b", Set.of("/b"))));
        assertEquals(List.of(List.of("a"), List.of("b")), sender.requests);
    }

    @Test
    void callsArrivingWhileOneIsInFlightGoTogetherEachWithItsOwnOutcome() throws Exception {
        FakeSender sender = new FakeSender();
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        List<Txn> parts = new ArrayList<>();
        for (int i = 0; i < 5; i++) parts.add(new Txn("p" + i, Set.of("/ip/" + i, "/owner/" + i)));
        Map<String, Object> outcomes = behindAHeldRequest(gc, sender, parts);
        assertEquals("first:alone", outcomes.get("first"));
        for (int i = 0; i < 5; i++) assertEquals("p" + i + ":in-5", outcomes.get("p" + i));
        assertEquals(2, sender.requests.size());
        assertEquals(5, sender.requests.get(1).size());
    }

    @Test
    void partsPuttingTheSameKeyNeverShareARequest() throws Exception {
        FakeSender sender = new FakeSender();
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        // b guessed the address a guessed: etcd would refuse a request putting /ip/7 twice
        List<Txn> parts = List.of(new Txn("a", Set.of("/ip/7", "/owner/a")), new Txn("b", Set.of("/ip/7", "/owner/b")),
                new Txn("c", Set.of("/ip/8", "/owner/c")));
        Map<String, Object> outcomes = behindAHeldRequest(gc, sender, parts);
        assertEquals(3, sender.requests.size(), sender.requests.toString());
        assertEquals(List.of("a", "c"), sender.requests.get(1));
        assertEquals(List.of("b"), sender.requests.get(2));
        assertEquals("b:alone", outcomes.get("b"));
        assertEquals("a:in-2", outcomes.get("a"));
    }

    @Test
    void aRequestRefusedAsAWholeIsSentAgainPartByPart() throws Exception {
        FakeSender sender = new FakeSender();
        sender.refuseTogether = new EtcdException("etcd http://x:1/v3/kv/txn: unknown field \"request_txn\"");
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        Map<String, Object> outcomes = behindAHeldRequest(gc, sender,
                List.of(new Txn("a", Set.of("/a")), new Txn("b", Set.of("/b")), new Txn("c", Set.of("/c"))));
        assertEquals("a:alone", outcomes.get("a"));
        assertEquals("b:alone", outcomes.get("b"));
        assertEquals("c:alone", outcomes.get("c"));
        assertEquals(List.of(List.of("first"), List.of("a", "b", "c"), List.of("a"), List.of("b"), List.of("c")), sender.requests);
    }

    @Test
    void anUnreachableEtcdFailsEveryPartOfTheRequest() throws Exception {
        FakeSender sender = new FakeSender();
        IOException down = new IOException("etcd http://x:1/v3/kv/txn: connection refused");
        sender.failTogether = down;
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        Map<String, Object> outcomes = behindAHeldRequest(gc, sender, List.of(new Txn("a", Set.of("/a")), new Txn("b", Set.of("/b"))));
        assertSame(down, outcomes.get("a"));
        assertSame(down, outcomes.get("b"));
        assertEquals(2, sender.requests.size(), "not sent again: the caller decides (cluster-ipam's Clients)");
    }

    @Test
    void aRequestHoldsAtMostItsBoundOfParts() throws Exception {
        FakeSender sender = new FakeSender();
        GroupCommit<Txn, String> gc = new GroupCommit<>(sender);
        List<Txn> parts = new ArrayList<>();
        for (int i = 0; i < GroupCommit.MAX_PARTS + 3; i++) parts.add(new Txn("p" + i, Set.of("/p" + i)));
        Map<String, Object> outcomes = behindAHeldRequest(gc, sender, parts);
        for (List<String> r : sender.requests) assertTrue(r.size() <= GroupCommit.MAX_PARTS, r.toString());
        for (Txn t : parts) assertFalse(outcomes.get(t.name()) instanceof IOException, t.name());
        assertEquals(parts.size() + 1, sender.requests.stream().mapToInt(List::size).sum());
    }
}
