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
 * T2 (broadcast), persisted when they change (see {@link #persistIfChanged}) and reloaded on
 * start, so a restarted jcnid goes on renewing them (the reference daemon keeps them in memory
 * only), and released on DEL or GC. A lease the server takes back or moves to another address is
 * given up and its interface set down (see {@link #lose}): the container never goes on with an
 * address jcnid does not hold.
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
    /** What each lease file holds now: a renewal that changes only the times rewrites it only when the recorded lease is half used. */
    private final Map<String, Lease> recorded = new ConcurrentHashMap<>();
    /** Leases reloaded with their recorded expiry past: one rebinding decides whether they are still held. */
    private final Set<String> unconfirmed = ConcurrentHashMap.newKeySet();
    private final RenewalLog renewalLog;
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
        this.renewalLog = new RenewalLog(clock);
    }

    /** Loads the stored leases and schedules each one's next renewal (at once when it is due). */
    public int reload() throws IOException {
        int n = 0;
        for (Lease l : store.loadAll(log)) {
            leases.put(l.clientId(), l);
            recorded.put(l.clientId(), l);
            LeaseTimes.Step step = l.times().step(clock.getAsLong());
            // The file is not rewritten on every renewal: jcnid may have renewed the lease after it was written.
            if (step == LeaseTimes.Step.EXPIRED) unconfirmed.add(l.clientId());
            schedule(l, step == LeaseTimes.Step.WAIT ? l.times().renewAt() : clock.getAsLong());
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
                DhcpClient c = new DhcpClient(t, identity, clock, random);
                DhcpMessage ack = c.acquire(null, req.timeoutMillis());
                t2 = System.nanoTime();
                try {
                    lease = Lease.fromAck(req.containerId(), req.network(), req.ifname(), req.netns(), identity, ack, null, clock.getAsLong());
                } catch (DhcpException e) {
                    // The server holds the address for us now: give it back rather than leave it allocated.
                    IpAddr server = DhcpOptions.firstAddress(ack.option(DhcpOptions.SERVER_ID));
                    IpAddr granted = new IpAddr(ack.yiaddr());
                    if (server != null) c.releaseUnconfigured(granted, server);
                    String by = server == null ? "the DHCP server" : "the DHCP server " + server;
                    throw new DhcpException(e.kind(), e.kind() == DhcpException.Kind.ZERO_LEASE
                            ? by + " granted " + granted + " for 0 seconds (option 51): refused" + (server == null ? "" : " and released")
                            : e.getMessage() + " (from " + by + " for " + granted + ")");
                }
            }
            try {
                store.save(lease);
            } catch (IOException e) {
                releaseQuietly(lease); // an unrecorded lease would never be renewed nor released
                throw e;
            }
            recorded.put(id, lease);
            unconfirmed.remove(id);
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
            forgetBookkeeping(clientId);
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
        ScheduledFuture<?> f = timer.schedule(() -> maintainOrRetry(l), delay, TimeUnit.MILLISECONDS);
        ScheduledFuture<?> old = timers.put(l.clientId(), f);
        if (old != null) old.cancel(false);
    }

    /** A timer's task must not die silently (the executor would swallow it, and the lease would never be renewed again). */
    private void maintainOrRetry(Lease l) {
        try {
            maintain(l.clientId());
        } catch (Throwable t) {
            logLine(l, "maintain_failed error=" + quote(String.valueOf(t)) + " retry_in=60s");
            try {
                if (leases.get(l.clientId()) != null) schedule(l, clock.getAsLong() + 60_000);
            } catch (Throwable ignored) {
                // the executor itself is gone: jcnid is stopping
            }
        }
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
                    if (unconfirmed.remove(id)) {
                        extend(l, LeaseTimes.Step.REBIND, now);
                        return;
                    }
                    lose(l, "expired address=" + l.address() + " (no server answered until the lease ran out)");
                }
                case RENEW, REBIND -> extend(l, step, now);
            }
        }
    }

    /**
     * The lease is gone (expired, NAKed and not granted again, or the server now hands out another
     * address): the container must stop using the address, which the server may give to another
     * host. Its interface is set down, as the reference does at expiry; the runtime learns it
     * from CHECK, which fails once the lease is forgotten.
     */
    private void lose(Lease l, String why) {
        logLine(l, why + "; setting " + l.ifname() + " down, as the reference daemon does at expiry");
        try {
            opener.down(l.netns(), l.ifname());
        } catch (RuntimeException e) {
            logLine(l, "down_failed error=" + quote(String.valueOf(e.getMessage())));
        }
        forget(l);
    }

    private void forget(Lease l) {
        leases.remove(l.clientId());
        timers.remove(l.clientId());
        forgetBookkeeping(l.clientId());
        try {
            store.delete(l.clientId());
        } catch (IOException e) {
            logLine(l, "error=" + quote("deleting lease file: " + e.getMessage()));
        }
    }

    private void forgetBookkeeping(String id) {
        recorded.remove(id);
        unconfirmed.remove(id);
        renewalLog.forget(id);
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
                forget(l);
                return;
            }
            Lease renewed;
            try (Transport t = o.transport()) {
                renewed = renewOver(t, l, server, now);
            }
            if (renewed == null) return;
            unconfirmed.remove(l.clientId());
            persistIfChanged(renewed);
            leases.put(l.clientId(), renewed);
            schedule(renewed, renewed.times().renewAt());
            String line = renewalLog.line(l.clientId(), step == LeaseTimes.Step.RENEW ? "renewed" : "rebound",
                    " address=" + renewed.address() + " renew_at=" + at(renewed.times().renewAt()) + " expires_at="
                            + at(renewed.times().expiresAt()));
            if (line != null) logLine(renewed, line);
        } catch (DhcpException | IOException | RuntimeException e) {
            long after = clock.getAsLong();
            // A renewal that failed past T2 goes on as a rebinding at once, not a minute later.
            long retry = l.times().step(after) != step ? after : l.times().retryAt(after);
            String line = renewalLog.line(l.clientId(), step == LeaseTimes.Step.RENEW ? "renew_failed" : "rebind_failed",
                    " error=" + quote(e.getMessage()) + " retry_at=" + at(retry));
            if (line != null) logLine(l, line);
            schedule(l, retry);
        }
    }

    /**
     * One renewal (or rebinding, {@code server} null) exchange over {@code t}: the lease as the server extended it,
     * or null when the lease is lost (already handed to {@link #lose}).
     */
    private Lease renewOver(Transport t, Lease l, IpAddr server, long now) throws DhcpException {
        DhcpClient c = new DhcpClient(t, l.identity(), clock, random);
        long budget = l.times().step(now) == LeaseTimes.Step.EXPIRED ? RENEW_EXCHANGE_MILLIS // reloaded, unconfirmed
                : Math.min(RENEW_EXCHANGE_MILLIS, Math.max(1000, l.times().nextEvent(now) - now));
        DhcpMessage ack;
        try {
            ack = c.extend(l.address(), server, budget);
        } catch (DhcpException e) {
            if (e.kind() != DhcpException.Kind.NAK) throw e;
            // RFC 2131 4.4.5: a NAK ends the lease at once; start again at INIT, asking for the same address.
            logLine(l, "nak " + quote(e.getMessage()) + "; asking for " + l.address() + " again");
            try {
                ack = c.acquire(l.address(), RENEW_EXCHANGE_MILLIS);
            } catch (DhcpException again) {
                lose(l, "lost address=" + l.address() + " reason=" + quote("DHCPNAK, then " + again.getMessage()));
                return null;
            }
        }
        IpAddr granted = new IpAddr(ack.yiaddr());
        if (!granted.equals(l.address())) {
            // The container keeps the address the runtime was given; jcnid cannot hold that one, and will not
            // hold another in its name. The new address goes back to the server.
            IpAddr grantor = DhcpOptions.firstAddress(ack.option(DhcpOptions.SERVER_ID));
            if (grantor != null) c.releaseUnconfigured(granted, grantor);
            lose(l, "lost address=" + l.address() + " reason=" + quote("the server now grants " + granted
                    + " instead (network renumbered?); released " + granted + "; the container must be recreated"));
            return null;
        }
        try {
            return l.withAck(ack, clock.getAsLong());
        } catch (DhcpException e) {
            if (e.kind() != DhcpException.Kind.ZERO_LEASE) throw e;
            lose(l, "lost address=" + l.address() + " reason=" + quote("the server renewed it for 0 seconds"));
            return null;
        }
    }

    /**
     * Writes the lease file when it would say something new: another address, server, ACK or
     * attachment; or times that have gone stale, the recorded lease being half used. A renewal
     * changes only the times, so most renewals of a lease renewed before half its time (T1 set
     * short by the server) write nothing; a jcnid restarted meanwhile renews at once, and one
     * that finds the recorded lease expired rebinds before it gives up on it.
     */
    private void persistIfChanged(Lease renewed) throws IOException {
        Lease had = recorded.get(renewed.clientId());
        if (had != null && had.sameGrant(renewed) && !had.times().halfUsed(clock.getAsLong())) return;
        store.save(renewed);
        recorded.put(renewed.clientId(), renewed);
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
