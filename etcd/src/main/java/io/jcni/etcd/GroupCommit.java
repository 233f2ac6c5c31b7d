package io.jcni.etcd;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Group commit: transactions submitted while one is in flight on the same client go out
 * together in the next request, each as its own nested transaction (etcd 3.3+: a {@code request_txn}
 * operation inside the outer transaction's success branch). Each part keeps its own compare set,
 * success and failure branch, and succeeds or fails on its own; the whole request is one raft
 * entry, so a part's keys are all written or none, whatever happens to the process. What is saved
 * is etcd's cost per request (HTTP, the gateway's JSON, the gRPC hop, the raft entry and its WAL
 * write), which is most of what an allocation costs it.
 *
 * <p>A lone transaction is sent as it is. Parts that put the same key never share a request (etcd
 * refuses a request that puts a key twice). A request that etcd refuses as a whole (an
 * {@link EtcdException}: an etcd without nested transactions, a request too large) is sent again
 * part by part; any other failure (unreachable, timeout, TLS, authentication) is every part's.
 *
 * @param <P> a part (one caller's transaction)
 * @param <R> its outcome
 */
final class GroupCommit<P extends GroupCommit.Part, R> {
    /** Parts per request; etcd allows 128 operations per level of a transaction. */
    static final int MAX_PARTS = 32;

    /** One caller's transaction: the keys it puts, whatever its branch. */
    interface Part {
        Set<String> puts();
    }

    /** How parts reach etcd. */
    interface Sender<P, R> {
        R alone(P part) throws IOException;

        /** The outcomes in the order of {@code parts}. */
        List<R> together(List<P> parts) throws IOException;
    }

    private final Sender<P, R> sender;
    private final ArrayDeque<Waiting<P, R>> queue = new ArrayDeque<>(); // guarded by this
    private boolean inFlight; // guarded by this

    GroupCommit(Sender<P, R> sender) {
        this.sender = sender;
    }

    private static final class Waiting<P, R> {
        final P part;
        R outcome;
        IOException failure;
        Throwable bug; // a RuntimeException or an Error of the sender
        boolean done;

        Waiting(P part) {
            this.part = part;
        }
    }

    /** Sends {@code part}, with whatever else waits, and returns its own outcome. */
    R submit(P part) throws IOException {
        Waiting<P, R> me = new Waiting<>(part);
        synchronized (this) {
            queue.addLast(me);
        }
        while (true) {
            List<Waiting<P, R>> batch;
            synchronized (this) {
                while (inFlight && !me.done) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        queue.remove(me);
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException("etcd transaction interrupted");
                    }
                }
                if (me.done) return outcome(me);
                inFlight = true;
                batch = take();
            }
            try {
                send(batch);
            } finally {
                synchronized (this) {
                    inFlight = false;
                    notifyAll();
                }
            }
        }
    }

    private R outcome(Waiting<P, R> w) throws IOException {
        if (w.failure != null) throw w.failure;
        if (w.bug instanceof RuntimeException e) throw e;
        if (w.bug instanceof Error e) throw e;
        return w.outcome;
    }

    /** The next request's parts, oldest first, none putting a key another one puts. */
    private List<Waiting<P, R>> take() {
        List<Waiting<P, R>> batch = new ArrayList<>();
        Set<String> puts = new HashSet<>();
        for (Iterator<Waiting<P, R>> it = queue.iterator(); it.hasNext() && batch.size() < MAX_PARTS;) {
            Waiting<P, R> w = it.next();
            Set<String> mine = w.part.puts();
            if (!batch.isEmpty() && !disjoint(puts, mine)) continue; // the next request
            puts.addAll(mine);
            batch.add(w);
            it.remove();
        }
        return batch;
    }

    private static boolean disjoint(Set<String> a, Set<String> b) {
        for (String k : b) if (a.contains(k)) return false;
        return true;
    }

    private void send(List<Waiting<P, R>> batch) {
        try {
            if (batch.size() == 1) {
                alone(batch.getFirst());
                return;
            }
            List<P> parts = new ArrayList<>(batch.size());
            for (Waiting<P, R> w : batch) parts.add(w.part);
            List<R> outcomes;
            try {
                outcomes = sender.together(parts);
            } catch (EtcdException refused) {
                for (Waiting<P, R> w : batch) alone(w);
                return;
            } catch (IOException e) {
                for (Waiting<P, R> w : batch) w.failure = e;
                return;
            }
            for (int i = 0; i < batch.size(); i++) batch.get(i).outcome = outcomes.get(i);
        } catch (RuntimeException | Error e) {
            for (Waiting<P, R> w : batch) if (w.failure == null && w.outcome == null) w.bug = e;
            throw e;
        } finally {
            synchronized (this) {
                for (Waiting<P, R> w : batch) w.done = true;
            }
        }
    }

    private void alone(Waiting<P, R> w) {
        try {
            w.outcome = sender.alone(w.part);
        } catch (IOException e) {
            w.failure = e;
        }
    }

    /** Parts waiting for the next request (tests). */
    synchronized int waiting() {
        return queue.size();
    }
}
