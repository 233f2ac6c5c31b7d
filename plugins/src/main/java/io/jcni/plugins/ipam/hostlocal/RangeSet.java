package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.IpAddr;
import java.math.BigInteger;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A pool of disjoint ranges of one address family; host-local hands out one address per range
 * set (backend/allocator/range_set.go). The index of a set in the config names its
 * {@code last_reserved_ip.<index>} file.
 */
public final class RangeSet {
    private final List<Range> ranges;

    private RangeSet(List<Range> ranges) {
        this.ranges = List.copyOf(ranges);
    }

    /** Validates canonical ranges as one set, with upstream's {@code RangeSet.Canonicalize} errors. */
    public static RangeSet of(List<Range> ranges) {
        if (ranges.isEmpty()) throw Errors.config("empty range set");
        boolean v6 = ranges.get(0).isV6();
        for (Range r : ranges) {
            if (r.isV6() != v6) throw Errors.config("mixed address families");
        }
        for (int i = 0; i < ranges.size(); i++) {
            for (int j = i + 1; j < ranges.size(); j++) {
                Range a = ranges.get(i);
                Range b = ranges.get(j);
                if (a.overlaps(b)) throw Errors.config("subnets " + a + " and " + b + " overlap");
            }
        }
        return new RangeSet(ranges);
    }

    public List<Range> ranges() {
        return ranges;
    }

    public boolean isV6() {
        return ranges.get(0).isV6();
    }

    public boolean contains(IpAddr ip) {
        return find(ip).isPresent();
    }

    /** The range holding {@code ip}, if any. */
    public Optional<Range> find(IpAddr ip) {
        for (Range r : ranges) {
            if (r.contains(ip)) return Optional.of(r);
        }
        return Optional.empty();
    }

    /** The range holding {@code ip}, or upstream's {@code RangeFor} error. */
    public Range rangeFor(IpAddr ip) {
        return find(ip).orElseThrow(() -> Errors.config(ip + " not in range set " + this));
    }

    public boolean overlaps(RangeSet other) {
        for (Range a : ranges) {
            for (Range b : other.ranges) {
                if (a.overlaps(b)) return true;
            }
        }
        return false;
    }

    /** How many addresses the allocator can hand out from the whole set. */
    public BigInteger allocatableCount() {
        BigInteger n = BigInteger.ZERO;
        for (Range r : ranges) n = n.add(r.allocatableCount());
        return n;
    }

    /** Ranges joined with commas, as in upstream error messages. */
    @Override
    public String toString() {
        return ranges.stream().map(Range::toString).collect(Collectors.joining(","));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RangeSet s && ranges.equals(s.ranges);
    }

    @Override
    public int hashCode() {
        return ranges.hashCode();
    }
}
