package io.jcni.plugins.ipam.hostlocal;

import java.math.BigInteger;
import java.util.List;

/**
 * What CNI STATUS needs from host-local.
 *
 * @param problem why the data directory is unusable, or null when it is fine
 * @param rangeSets one entry per configured range set, empty when the directory is unusable
 */
public record HostLocalStatus(String problem, List<RangeSetStatus> rangeSets) {
    public HostLocalStatus {
        rangeSets = List.copyOf(rangeSets);
    }

    /**
     * @param capacity addresses the allocator can hand out from the set
     * @param reserved addresses of the set currently reserved
     */
    public record RangeSetStatus(int index, RangeSet rangeSet, BigInteger capacity, long reserved) {
        public boolean exhausted() {
            return capacity.compareTo(BigInteger.valueOf(reserved)) <= 0;
        }
    }

    public boolean dataDirUsable() {
        return problem == null;
    }

    /** Whether an ADD could succeed: the directory is usable and no range set is full. */
    public boolean available() {
        return problem == null && rangeSets.stream().noneMatch(RangeSetStatus::exhausted);
    }
}
