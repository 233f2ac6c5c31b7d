package io.jcni.plugins.ipam.clusteripam;

import io.jcni.types.IpAddr;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A listing of a range set's taken addresses, made once for the concurrent calls of this process
 * that need one: a call that asks while another call's listing of the same set is in flight waits
 * for that one and takes its result (or its failure). When a range fills up, the calls of a busy
 * process (jcnid, 16 in flight) miss their guesses together and each listed the whole range: a
 * keys-only listing is about 110 bytes of JSON per address, which etcd marshals and the client
 * reads (and, over TLS, decrypts) once per call instead of once per burst. A listing is a hint
 * like any knowledge of taken addresses: one that started a little before the caller asked may
 * miss an address taken since, which costs a lost guess, never a duplicate (only the create
 * transaction gives an address).
 */
final class SharedListing {
    /** Reads the set's taken addresses from etcd. */
    interface Lister {
        Set<IpAddr> list() throws IOException;
    }

    private static final ConcurrentHashMap<String, Flight> IN_FLIGHT = new ConcurrentHashMap<>();

    private SharedListing() {}

    /** One listing in flight and its outcome; the fields are guarded by the flight itself. */
    private static final class Flight {
        private Set<IpAddr> taken;
        private Throwable failure;
        private boolean done;
        private int waiting;

        synchronized void finish(Set<IpAddr> t, Throwable f) {
            taken = t;
            failure = f;
            done = true;
            notifyAll();
        }

        synchronized Set<IpAddr> await() throws IOException {
            waiting++;
            try {
                while (!done) wait();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("cluster-ipam: interrupted while waiting for a listing of the range");
            } finally {
                waiting--;
            }
            // the lister's own exception, so the caller decides on it as on its own (a timeout is sent again, TLS and auth are not)
            if (failure instanceof IOException e) throw e;
            if (failure instanceof RuntimeException e) throw e;
            if (failure instanceof Error e) throw e;
            return taken;
        }
    }

    /** Callers waiting for the listing of {@code key} in flight (tests). */
    static int waiting(String key) {
        Flight f = IN_FLIGHT.get(key);
        if (f == null) return 0;
        synchronized (f) {
            return f.waiting;
        }
    }

    /** The set's taken addresses (unmodifiable): {@code lister}'s, or those of a listing of {@code key} already in flight. */
    static Set<IpAddr> taken(String key, Lister lister) throws IOException {
        Flight mine = new Flight();
        Flight running = IN_FLIGHT.putIfAbsent(key, mine);
        if (running != null) return running.await();
        Set<IpAddr> taken = null;
        Throwable failure = null;
        try {
            taken = Set.copyOf(lister.list());
            return taken;
        } catch (IOException | RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            IN_FLIGHT.remove(key, mine);
            mine.finish(taken, failure);
        }
    }
}
