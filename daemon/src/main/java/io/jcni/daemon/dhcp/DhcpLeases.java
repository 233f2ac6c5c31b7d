package io.jcni.daemon.dhcp;

import io.jcni.linux.ErrnoException;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * The leases jcnid holds: acquired on ADD, renewed on timers at T1 (unicast to their server) and
 * T2 (broadcast), persisted after every change and reloaded on start, so a restarted jcnid goes
 * on renewing them (the reference daemon keeps them in memory only), and released on DEL or GC.
 *
 * <p>Exchanges block (up to their timeout), and open their socket inside the container's
 * namespace, so they run on platform threads: those of the ADD/DEL connection, or of the small
 * renewal pool.
 */
public final class DhcpLeases implements AutoCloseable {
    /** How long one renewal or rebinding exchange may take before it is retried later. */
    static final long RENEW_EXCHANGE_MILLIS = 10_000;

    /** What ADD asks for. */
    public record Acquire(String containerId, String network, String ifname, String netns, List<Integer> requested,
                          Map<Integer, byte[]> provided, long timeoutMillis) {
        String clientId() {
            return ClientIdentity.clientId(containerId, network, ifname);
        }
    }

    /** Reaches an interface of a namespace: the real one or a fake. */
    public interface Opener {
        /** The transport and the interface's MAC. */
        Opened open(String netns, String ifname);

        /** Sets the interface down: its lease expired, its address is no longer the container's to use. */
        void down(String netns, String ifname);
    }

    public record Opened(Transport transport, byte[] mac) {}

    private final LeaseStore store;
    private final PrintStream log;
    private final Opener opener;
    private final LongSupplier clock;
    private final RandomGenerator random = RandomGenerator.of("L64X128MixRandom");
    private final Map<String, Lease> leases = new ConcurrentHashMap<>();
    private final Map<String, ScheduledFuture<?>> timers = new ConcurrentHashMap<>();
    /** One lock object per client id: ADD, DEL and the renewal timer of a lease never overlap. */
    private final Map<String, Object> locks = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2,
            Thread.ofPlatform().name("jcnid-dhcp-", 0).daemon().factory());

    public DhcpLeases(LeaseStore store, PrintStream log) {
        this(store, log, new Opener() {
            @Override
            public Opened open(String netns, String ifname) {
                InterfaceTransport t = InterfaceTransport.open(netns, ifname);
                return new Opened(t, t.mac());
            }

            @Override
            public void down(String netns, String ifname) {
                InterfaceTransport.down(netns, ifname);
            }
        }, System::currentTimeMillis);
    }

    DhcpLeases(LeaseStore store, PrintStream log, Opener opener, LongSupplier clock) {
        this.store = store;
        this.log = log;
        this.opener = opener;
        this.clock = clock;
    }

    /** Loads the stored leases and schedules each one's next renewal (at once when it is due). */
    public int reload() throws IOException {
        int n = 0;
        for (Lease l : store.loadAll(log)) {
            leases.put(l.clientId(), l);
            schedule(l, l.times().step(clock.getAsLong()) == LeaseTimes.Step.WAIT ? l.times().renewAt() : clock.getAsLong());
            logLine(l, "reloaded address=" + l.address() + " renew_at=" + at(l.times().renewAt())
                    + " expires_at=" + at(l.times().expiresAt()));
            n++;
        }
        return n;
    }

    public int size() {
        return leases.size();
    }

    public Lease get(String clientId) {
        return leases.get(clientId);
    }

    /** ADD: the existing lease of this attachment when it has one, else a new one from the server. */
    public Lease acquire(Acquire req) throws DhcpException, IOException {
        String id = req.clientId();
        synchronized (lock(id)) {
            Lease have = leases.get(id);
            if (have != null && have.times().step(clock.getAsLong()) != LeaseTimes.Step.EXPIRED) return have;
            long t0 = System.nanoTime();
            Opened o = opener.open(req.netns(), req.ifname());
            long t1 = System.nanoTime();
            ClientIdentity identity = new ClientIdentity(id, o.mac(), req.requested(), req.provided());
            Lease lease;
            long t2;
            try (Transport t = o.transport()) {
                DhcpMessage ack = new DhcpClient(t, identity, clock, random).acquire(null, req.timeoutMillis());
                t2 = System.nanoTime();
                lease = Lease.fromAck(req.containerId(), req.network(), req.ifname(), req.netns(), identity, ack, null, clock.getAsLong());
            }
            try {
                store.save(lease);
            } catch (IOException e) {
                releaseQuietly(lease); // an unrecorded lease would never be renewed nor released
                throw e;
            }
            leases.put(id, lease);
            schedule(lease, lease.times().renewAt());
            logLine(lease, "acquired address=" + lease.address() + " server=" + lease.server() + " renew_at="
                    + at(lease.times().renewAt()) + " rebind_at=" + at(lease.times().rebindAt()) + " expires_at="
                    + at(lease.times().expiresAt()) + String.format(" open_ms=%.1f exchange_ms=%.1f", (t1 - t0) / 1e6, (t2 - t1) / 1e6));
            return lease;
        }
    }

    /** DEL: sends RELEASE to the server that granted the lease (when the interface still exists) and forgets it. */
    public void release(String clientId) throws IOException {
        synchronized (lock(clientId)) {
            Lease l = leases.remove(clientId);
            ScheduledFuture<?> f = timers.remove(clientId);
            if (f != null) f.cancel(false);
            if (l != null) {
                releaseQuietly(l);
                logLine(l, "released address=" + l.address());
            }
            store.delete(clientId);
        }
        locks.remove(clientId);
    }

    /** GC: releases the leases of {@code network} whose attachment (container id, ifname) is not in {@code valid}. */
    public List<String> collect(String network, Set<List<String>> valid) throws IOException {
        List<String> released = new ArrayList<>();
        for (Lease l : List.copyOf(leases.values())) {
            if (!l.network().equals(network) || valid.contains(List.of(l.containerId(), l.ifname()))) continue;
            release(l.clientId());
            released.add(l.clientId());
        }
        return released;
    }

    private void releaseQuietly(Lease l) {
        try {
            Opened o = opener.open(l.netns(), l.ifname());
            try (Transport t = o.transport()) {
                new DhcpClient(t, l.identity(), clock, random).release(l.address(), l.server());
            }
        } catch (ErrnoException e) {
            // The namespace or interface is gone: nothing can reach the server from there; the lease expires there.
            logLine(l, "release_skipped reason=" + quote("container interface unreachable: " + e.getMessage()));
        } catch (RuntimeException e) {
            logLine(l, "release_failed error=" + quote(String.valueOf(e)));
        }
    }

    private Object lock(String id) {
        return locks.computeIfAbsent(id, k -> new Object());
    }

    private void schedule(Lease l, long atMillis) {
        if (atMillis == Long.MAX_VALUE) return; // an infinite lease
        long delay = Math.max(0, atMillis - clock.getAsLong());
        ScheduledFuture<?> f = timer.schedule(() -> maintain(l.clientId()), delay, TimeUnit.MILLISECONDS);
        ScheduledFuture<?> old = timers.put(l.clientId(), f);
        if (old != null && old != f) old.cancel(false);
    }

    /** One timer firing: renew, rebind or expire, as the lease's times say; then the next timer. */
    void maintain(String id) {
        synchronized (lock(id)) {
            Lease l = leases.get(id);
            if (l == null) return;
            long now = clock.getAsLong();
            LeaseTimes.Step step = l.times().step(now);
            switch (step) {
                case WAIT -> schedule(l, l.times().renewAt());
                case EXPIRED -> {
                    logLine(l, "expired address=" + l.address() + " (no server answered until the lease ran out); setting "
                            + l.ifname() + " down, as the reference daemon does");
                    try {
                        opener.down(l.netns(), l.ifname());
                    } catch (RuntimeException e) {
                        logLine(l, "down_failed error=" + quote(String.valueOf(e.getMessage())));
                    }
                    leases.remove(id);
                    timers.remove(id);
                    try {
                        store.delete(id);
                    } catch (IOException e) {
                        logLine(l, "error=" + quote("deleting lease file: " + e.getMessage()));
                    }
                }
                case RENEW, REBIND -> extend(l, step, now);
            }
        }
    }

    private void extend(Lease l, LeaseTimes.Step step, long now) {
        IpAddr server = step == LeaseTimes.Step.RENEW ? l.server() : null;
        try {
            Opened o;
            try {
                o = opener.open(l.netns(), l.ifname());
            } catch (ErrnoException e) {
                // The container went away without a DEL: its lease is of no use to anyone.
                logLine(l, "forgotten reason=" + quote("container interface gone: " + e.getMessage()));
                leases.remove(l.clientId());
                timers.remove(l.clientId());
                store.delete(l.clientId());
                return;
            }
            Lease renewed;
            try (Transport t = o.transport()) {
                DhcpClient c = new DhcpClient(t, l.identity(), clock, random);
                long budget = Math.min(RENEW_EXCHANGE_MILLIS, Math.max(1000, l.times().nextEvent(now) - now));
                try {
                    renewed = l.withAck(c.extend(l.address(), server, budget), clock.getAsLong());
                } catch (DhcpException e) {
                    if (e.kind() != DhcpException.Kind.NAK) throw e;
                    // RFC 2131 4.4.5: a NAK ends the lease; start again at INIT, asking for the same address.
                    logLine(l, "nak " + quote(e.getMessage()) + "; acquiring again");
                    renewed = Lease.fromAck(l.containerId(), l.network(), l.ifname(), l.netns(), l.identity(),
                            c.acquire(l.address(), RENEW_EXCHANGE_MILLIS), null, clock.getAsLong());
                    if (!renewed.address().equals(l.address())) {
                        logLine(l, "warning=" + quote("the server gave a different address " + renewed.address()
                                + "; the container still has " + l.address()));
                    }
                }
            }
            store.save(renewed);
            leases.put(l.clientId(), renewed);
            schedule(renewed, renewed.times().renewAt());
            logLine(renewed, (step == LeaseTimes.Step.RENEW ? "renewed" : "rebound") + " address=" + renewed.address()
                    + " renew_at=" + at(renewed.times().renewAt()) + " expires_at=" + at(renewed.times().expiresAt()));
        } catch (DhcpException | IOException | RuntimeException e) {
            long after = clock.getAsLong();
            // A renewal that failed past T2 goes on as a rebinding at once, not a minute later.
            long retry = l.times().step(after) != step ? after : l.times().retryAt(after);
            logLine(l, (step == LeaseTimes.Step.RENEW ? "renew" : "rebind") + "_failed error=" + quote(e.getMessage())
                    + " retry_at=" + at(retry));
            schedule(l, retry);
        }
    }

    private void logLine(Lease l, String what) {
        log.println(Instant.now() + " jcnid dhcp client=" + quote(l.clientId()) + " " + what);
    }

    private static String at(long millis) {
        return millis == Long.MAX_VALUE ? "never" : Instant.ofEpochMilli(millis).toString();
    }

    static String quote(String s) {
        if (s == null) return "\"\"";
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    /** Stops the timers; the leases stay stored (and held at the server) for the next jcnid. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
