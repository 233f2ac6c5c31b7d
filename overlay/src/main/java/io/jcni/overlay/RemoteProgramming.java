package io.jcni.overlay;

import io.jcni.types.Cidr;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The remote leases programmed into this host's kernel, changed by difference ({@link LeaseDiff}),
 * and the retry of a subnet whose add or remove failed. A failure is mostly transient (the
 * underlay briefly down, EBUSY, ENOBUFS), and in a quiet cluster no later change of that lease
 * and no re-list may come to try it again: that host would stay unreachable, or a stale route
 * stay. So a failed subnet is tried again on its own, 1 s after its first failure, doubling up to
 * 30 s ({@link Backoff}), back to 1 s after a success; each failure is logged once per kind (what
 * failed and why), not on every retry.
 *
 * <p>A retry re-derives what to do from what is programmed and what is wanted at that moment,
 * never from the failed change: a lease no longer accepted is not programmed, one wanted again is
 * not removed.
 *
 * <p>A programmed remote whose entries the kernel lost ({@link RemoteCheck}: a link flap, an
 * admin's {@code ip route del}) is no longer taken for programmed and is added again through the
 * same add, so a failed re-add (the link still down) is retried with the same back-off and logged
 * once; its recovery is logged once, when the add succeeds. Not thread-safe: its owner ({@link RemoteHosts}) holds its lock. No kernel here: the
 * changes go to a {@link Target} (the dataplane; a fake in tests), time is passed in.
 */
final class RemoteProgramming {
    /** Where the changes go: {@link Dataplane}. */
    interface Target {
        /** Makes {@code remote} reachable; false (nothing changed) when a route jcni does not own holds one of its subnets. */
        boolean add(Lease remote);

        void remove(Lease remote);
    }

    /** A subnet whose last add or remove failed: when it is tried again, and the failure last logged. */
    private static final class Failed {
        final Backoff backoff;
        long dueNanos;
        String loggedKind;
        int failures;

        Failed(Backoff backoff) {
            this.backoff = backoff;
        }
    }

    private final Target target;
    private final AgentLog log;
    private final RandomGenerator random;
    private final Map<Cidr, Lease> programmed = new HashMap<>();
    private final Set<Cidr> foreignRoutesLogged = new HashSet<>();
    private final Map<Cidr, Failed> failed = new HashMap<>();
    /** Subnets being added again because the kernel lost them: what it lacked, for the recovery's log line. */
    private final Map<Cidr, String> recovering = new HashMap<>();

    RemoteProgramming(Target target, AgentLog log, RandomGenerator random) {
        this.target = target;
        this.log = log;
        this.random = random;
    }

    /** The remote leases in the kernel now, by subnet (live: read it under the owner's lock). */
    Map<Cidr, Lease> programmed() {
        return programmed;
    }

    /** The subnets waiting for a retry (tests, the log). */
    Set<Cidr> failing() {
        return failed.keySet();
    }

    /**
     * Applies {@code d}: removes first, then adds. A subnet whose remove failed is not added in the
     * same pass (the old lease's entries are still there): its retry removes and adds together.
     */
    void apply(LeaseDiff d, long nowNanos) {
        Set<Cidr> failedNow = new HashSet<>();
        for (Lease l : d.removes()) {
            try {
                target.remove(l);
                programmed.remove(l.id());
                recovering.remove(l.id());
                succeeded(l.id());
                log.log("removed remote", describe(l));
            } catch (RuntimeException e) {
                failedNow.add(l.id());
                failed(l, "removing a remote failed", e, nowNanos);
            }
        }
        for (Lease l : d.adds()) {
            if (failedNow.contains(l.id())) continue;
            try {
                if (target.add(l)) {
                    programmed.put(l.id(), l);
                    foreignRoutesLogged.remove(l.id());
                    succeeded(l.id());
                    String lacked = recovering.remove(l.id());
                    if (lacked == null) log.log("added remote", describe(l));
                    else log.log("remote recovered", "subnet=" + l.id() + " missing=" + lacked);
                } else {
                    failed.remove(l.id()); // a route jcni did not install is left alone on purpose: nothing to retry
                    recovering.remove(l.id());
                    if (foreignRoutesLogged.add(l.id())) log.log("not adding a remote: a route jcni did not install holds its subnet", describe(l));
                }
            } catch (RuntimeException e) {
                failed(l, "adding a remote failed", e, nowNanos);
            }
        }
    }

    /**
     * Tries again each failed subnet whose time has come, as {@code wanted} (subnet → the lease
     * accepted for it now, or null) says at this moment; a subnet that needs nothing any more is
     * forgotten. Returns how many subnets were tried.
     */
    int retryDue(Function<Cidr, Lease> wanted, long nowNanos) {
        if (failed.isEmpty()) return 0;
        List<Cidr> due = new ArrayList<>();
        failed.forEach((sn, f) -> {
            if (nowNanos - f.dueNanos >= 0) due.add(sn);
        });
        for (Cidr sn : due) {
            Map<Cidr, Lease> have = new HashMap<>(), want = new HashMap<>();
            Lease h = programmed.get(sn), w = wanted.apply(sn);
            if (h != null) have.put(sn, h);
            if (w != null) want.put(sn, w);
            LeaseDiff d = LeaseDiff.between(have, want);
            if (d.isEmpty()) {
                failed.remove(sn); // the book changed meanwhile: what is programmed is what is wanted
                recovering.remove(sn);
            } else {
                apply(d, nowNanos);
            }
        }
        return due.size();
    }

    /**
     * Adds again each programmed remote of {@code missing} (subnet → what the kernel lacks of it),
     * through {@link #apply}: it is no longer taken for programmed, so when the add fails its retry
     * adds it. A subnet waiting for a retry is left to it. Returns how many were added again (or tried).
     */
    int recover(Map<Cidr, Set<RemoteCheck.Missing>> missing, long nowNanos) {
        List<Lease> adds = new ArrayList<>();
        missing.forEach((sn, lacked) -> {
            Lease l = programmed.get(sn);
            if (l == null || failed.containsKey(sn)) return;
            programmed.remove(sn);
            recovering.put(sn, RemoteCheck.describe(lacked));
            adds.add(l);
        });
        if (!adds.isEmpty()) apply(new LeaseDiff(List.of(), adds), nowNanos);
        return adds.size();
    }

    private void succeeded(Cidr sn) {
        Failed f = failed.remove(sn);
        if (f != null) log.log("remote programmed after failing", "subnet=" + sn + " failures=" + f.failures);
    }

    private void failed(Lease l, String what, RuntimeException e, long nowNanos) {
        Failed f = failed.computeIfAbsent(l.id(), sn -> new Failed(new Backoff(Backoff.FIRST, Backoff.MAX, random)));
        f.failures++;
        long delayMs = f.backoff.nextMillis();
        f.dueNanos = nowNanos + delayMs * 1_000_000L;
        String kind = what + ": " + e.getMessage();
        if (!kind.equals(f.loggedKind)) {
            f.loggedKind = kind;
            log.log(what + "; retrying", "subnet=" + l.id() + " error=\"" + e.getMessage() + "\" retry_ms=" + delayMs);
        }
    }

    /** A remote lease for the log: its subnets and public addresses. */
    static String describe(Lease l) {
        String s = l.hasV4() ? "subnet=" + l.subnet() + " public_ip=" + l.publicIp() : "";
        if (l.hasV6()) s += (s.isEmpty() ? "" : " ") + "ipv6_subnet=" + l.ipv6Subnet() + " public_ipv6=" + l.publicIpv6();
        return s;
    }
}
