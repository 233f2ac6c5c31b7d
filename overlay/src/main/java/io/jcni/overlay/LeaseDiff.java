package io.jcni.overlay;

import io.jcni.types.Cidr;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What to change in the kernel to go from the remote leases programmed to the remote leases wanted.
 * Pure. A changed lease (same subnet, new address or MAC: a host came back with a new VTEP) is a
 * remove of the old one and an add of the new.
 */
public record LeaseDiff(List<Lease> removes, List<Lease> adds) {

    public static LeaseDiff between(Map<Cidr, Lease> programmed, Map<Cidr, Lease> wanted) {
        List<Lease> rm = new ArrayList<>(), add = new ArrayList<>();
        for (Lease l : programmed.values()) {
            Lease w = wanted.get(l.id());
            if (w == null || !w.equals(l)) rm.add(l);
        }
        for (Lease w : wanted.values()) {
            if (!w.equals(programmed.get(w.id()))) add.add(w);
        }
        return new LeaseDiff(rm, add);
    }

    public boolean isEmpty() {
        return removes.isEmpty() && adds.isEmpty();
    }
}
