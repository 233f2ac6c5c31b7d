package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import java.io.IOException;
import java.util.Optional;
import java.util.Set;

/**
 * Hands out one address from one range set (upstream's {@code IPAllocator},
 * backend/allocator/allocator.go). Pure logic over a {@link Store}; the caller holds the store's
 * lock for the whole operation.
 *
 * <p>Strategy, as upstream: round-robin. The search starts right after the range set's
 * {@code last_reserved_ip}, so a crash-looping container does not get the same address back until
 * the whole set has been used; it walks the ranges in order, wraps around, and gives up when it is
 * back where it started.
 */
final class Allocator {
    /**
     * After this many consecutive taken candidates the allocator lists the reserved names once and
     * skips known-taken addresses in memory, instead of one failed exclusive create per address
     * through a densely used stretch.
     */
    static final int COLLISIONS_BEFORE_LISTING = 32;

    private final RangeSet rangeSet;
    private final Store store;
    private final int index;
    private final String rangeId;

    Allocator(RangeSet rangeSet, Store store, int index) {
        this.rangeSet = rangeSet;
        this.store = store;
        this.index = index;
        this.rangeId = Integer.toString(index);
    }

    /** Reserves {@code requested} if given, else the next free address; upstream's {@code Get}. */
    Allocation get(String containerId, String ifname, IpAddr requested) throws IOException {
        if (requested != null) {
            Range r = rangeSet.rangeFor(requested);
            if (requested.equals(r.gateway())) {
                throw Errors.config("requested ip " + requested + " is subnet's gateway");
            }
            if (r.isReservedAddress(requested)) {
                throw Errors.config("requested ip " + requested + " is the network or broadcast address of "
                        + r.subnet());
            }
            if (!store.reserve(containerId, ifname, requested, rangeId)) {
                throw Errors.tryAgain("requested IP address " + requested + " is not available in range set "
                        + rangeSet);
            }
            return new Allocation(index, requested, r.subnet().prefix(), r.gateway());
        }

        // The spec forbids a second ADD for the same attachment without a DEL in between.
        for (IpAddr ip : store.getById(containerId, ifname)) {
            if (rangeSet.contains(ip)) {
                // A runtime bug rather than a config or capacity problem: no better code than 999.
                throw new CniException(ErrorCode.INTERNAL, ip + " has been allocated to " + containerId
                        + ", duplicate allocation is not allowed");
            }
        }

        RangeIterator it = iterator();
        int collisions = 0;
        Set<IpAddr> taken = null;
        for (Candidate c = it.next(); c != null; c = it.next()) {
            if (taken != null && taken.contains(c.ip())) continue;
            if (store.reserve(containerId, ifname, c.ip(), rangeId)) {
                return new Allocation(index, c.ip(), c.range().subnet().prefix(), c.range().gateway());
            }
            if (taken == null && ++collisions >= COLLISIONS_BEFORE_LISTING) taken = store.reservedIps();
        }
        throw Errors.tryAgain("no IP addresses available in range set: " + rangeSet);
    }

    /** The round-robin walk, positioned after the last reserved address when it is in this set. */
    RangeIterator iterator() throws IOException {
        Optional<IpAddr> last;
        try {
            last = store.lastReservedIp(rangeId);
        } catch (IOException e) {
            // Not critical: we only lose round-robin this once (upstream logs and carries on).
            last = Optional.empty();
        }
        for (int i = 0; last.isPresent() && i < rangeSet.ranges().size(); i++) {
            if (rangeSet.ranges().get(i).contains(last.get())) return new RangeIterator(rangeSet, i, last.get());
        }
        return new RangeIterator(rangeSet, 0, null);
    }

    record Candidate(IpAddr ip, Range range) {}

    /**
     * Upstream's {@code RangeIter}. With no starting cursor the first candidate is the first
     * range's start; otherwise it is the address after the cursor (moving to the next range's
     * start past a range's end). The walk ends on returning to its first candidate. Addresses the
     * allocator must never hand out (gateway, network, IPv4 broadcast) are skipped.
     */
    static final class RangeIterator {
        private final RangeSet set;
        private int rangeIdx;
        private IpAddr cur;
        private IpAddr startIp;

        RangeIterator(RangeSet set, int rangeIdx, IpAddr cursor) {
            this.set = set;
            this.rangeIdx = rangeIdx;
            this.cur = cursor;
        }

        Candidate next() {
            while (true) {
                Range r = set.ranges().get(rangeIdx);
                if (cur == null) {
                    cur = r.rangeStart();
                    startIp = cur;
                } else {
                    if (cur.equals(r.rangeEnd())) {
                        rangeIdx = (rangeIdx + 1) % set.ranges().size();
                        r = set.ranges().get(rangeIdx);
                        cur = r.rangeStart();
                    } else {
                        cur = cur.next();
                    }
                    if (startIp == null) {
                        startIp = cur;
                    } else if (cur.equals(startIp)) {
                        return null;
                    }
                }
                if (!r.isReservedAddress(cur)) return new Candidate(cur, r);
            }
        }
    }
}
