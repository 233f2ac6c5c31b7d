package io.jcni.plugins.skel;

import java.util.Locale;

/**
 * Where one plugin call spends its time, phase by phase: a stopwatch that is always in exactly one
 * phase and adds the time since the last switch to the phase it leaves. Marking costs one
 * {@link System#nanoTime()} and an array add, allocates nothing, and is always on: the standalone
 * plugin pays it too, and jcnid adds the sums to its metrics and (with {@code --log-phases}) to
 * each request's log line.
 *
 * <p>Marks nest by hand: {@code Phase prev = phases.enter(Phase.NFT); try { ... } finally { phases.enter(prev); }},
 * so a phase entered inside another (a namespace switch inside IPAM) is counted once, as the inner one.
 *
 * <p>Not synchronized: one call runs one step at a time, though steps may move between threads
 * (into a namespace's thread and back); those hand-offs already order the writes.
 */
public final class Phases {

    /** The phases a call is divided into; every nanosecond between start and stop lands in one. */
    public enum Phase {
        /** jcnid: from the accepted request to the plugin's start (thread hand-off, the attachment's lock). */
        QUEUE,
        /** Validating CNI_* and decoding the config (the skeleton). */
        PARSE,
        /** Opening and entering network namespaces, sockets inside them, and coming back. */
        NETNS,
        /** The plugin's own work not marked otherwise: mostly netlink requests, sysctls, files. */
        PLUGIN,
        /** Delegated IPAM (host-local, static, ...), in-process or as a process. */
        IPAM,
        /** nftables work (portmap, firewall, masquerade, the bridge's spoof check). */
        NFT,
        /** Deleting links on DEL (the kernel's teardown: RCU grace periods). */
        LINK_DELETE,
        /** Encoding the result. */
        RESULT;

        private final String label = name().toLowerCase(Locale.ROOT);

        /** The metrics/log label: the name in lower case. */
        public String label() {
            return label;
        }
    }

    private static final Phase[] ALL = Phase.values();

    private final long[] nanos = new long[ALL.length];
    private Phase current;
    private long since;
    private int depth;

    /**
     * Switches to {@code next} (null stops the clock) and returns the phase left (null when the
     * clock was not running), for the caller to {@code enter} again when its step ends.
     */
    public Phase enter(Phase next) {
        return enterAt(next, System.nanoTime());
    }

    /** {@link #enter} at a given {@link System#nanoTime()} (tests, and callers that already read the clock). */
    public Phase enterAt(Phase next, long now) {
        Phase left = current;
        if (left != null) nanos[left.ordinal()] += now - since;
        current = next;
        since = now;
        return left;
    }

    /** Stops the clock; the sums stay. */
    public void stop() {
        enter(null);
    }

    /** The phase running now, or null. */
    public Phase current() {
        return current;
    }

    /** Nanoseconds spent in {@code p} so far (the running phase up to its last switch). */
    public long nanos(Phase p) {
        return nanos[p.ordinal()];
    }

    /** All phases' nanoseconds together. */
    public long totalNanos() {
        long t = 0;
        for (long n : nanos) t += n;
        return t;
    }

    /**
     * The skeleton enters here; true for the outermost call. A delegate run in-process (IPAM) goes
     * through the skeleton again with the same clock, and its parse and result belong to IPAM.
     */
    boolean openCall() {
        return depth++ == 0;
    }

    void closeCall() {
        depth--;
    }

    /** logfmt-friendly {@code parse:0.123,plugin:4.567,...}: the phases with time, in milliseconds. */
    public String summary() {
        StringBuilder b = new StringBuilder(96);
        for (Phase p : ALL) {
            long n = nanos[p.ordinal()];
            if (n == 0) continue;
            if (!b.isEmpty()) b.append(',');
            b.append(p.label()).append(':').append(String.format(Locale.ROOT, "%.3f", n / 1e6));
        }
        return b.toString();
    }
}
