package io.jcni.plugins.ipam.clusteripam;

import io.jcni.etcd.EtcdClient;
import io.jcni.etcd.KeyValue;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One host's periodic reconcile of its cluster-ipam allocations, without a runtime's GC: an
 * allocation whose container is gone for good (its network namespace no longer exists) is
 * released, so the leases of a crashed runtime, or of containers it forgot, come back.
 *
 * <p>Only this host's allocations are judged (its index, {@link Allocations#hostsDir}): another
 * host's namespaces cannot be seen from here. An allocation younger than the grace period is never
 * released, whatever its namespace: its ADD may still be running. Every release is one etcd
 * transaction guarded by the index entry's revision and by the address still naming the
 * attachment, so an allocation re-made meanwhile (DEL, then ADD of the same container and
 * interface) is never taken. An index entry whose allocation is gone already (a DEL from a
 * runtime without this host's name, a GC from another host) is dropped.
 */
public final class HostReconcile {
    private HostReconcile() {}

    /** What to do with one index entry. */
    public enum Verdict {
        /** Young: its ADD may be in flight. */
        KEEP_YOUNG,
        /** Its namespace still exists. */
        KEEP_ALIVE,
        /** The allocation is gone already (or the entry unreadable): drop the index entry only. */
        FORGET,
        /** Release the allocation and its index entry. */
        RELEASE
    }

    /**
     * The decision, pure.
     *
     * @param record the index entry, null when unreadable
     * @param ownerIp the address the allocation's owner key holds now, null when there is none
     * @param alive whether the record's namespace exists (asked only when it matters)
     */
    public static Verdict judge(HostRecord record, String ownerIp, long nowMillis, Duration grace, Predicate<HostRecord> alive) {
        if (record == null || ownerIp == null || !ownerIp.equals(record.ip().toString())) return Verdict.FORGET;
        if (nowMillis - record.createdMillis() < grace.toMillis()) return Verdict.KEEP_YOUNG;
        return alive.test(record) ? Verdict.KEEP_ALIVE : Verdict.RELEASE;
    }

    /** Counts of one round. */
    public record Outcome(int released, int forgotten, int kept) {}

    /**
     * One round over {@code host}'s index under {@code prefix} (cluster-ipam's {@code etcdPrefix}).
     *
     * @param alive whether a record's network namespace still exists on this host
     */
    public static Outcome reconcile(EtcdClient etcd, String prefix, String host, Duration grace, Predicate<HostRecord> alive)
            throws IOException {
        int released = 0, forgotten = 0, kept = 0;
        List<KeyValue> entries = etcd.getPrefix(Allocations.hostsDir(prefix, host)).kvs();
        for (KeyValue kv : entries) {
            Allocations.HostEntry e = Allocations.hostEntryOf(prefix, host, kv.key());
            if (e == null) continue;
            HostRecord r = HostRecord.decode(kv.value());
            String ownerKey = Allocations.ownerKey(prefix, e.range(), e.attachment());
            Optional<KeyValue> owner = etcd.get(ownerKey);
            switch (judge(r, owner.map(KeyValue::value).orElse(null), System.currentTimeMillis(), grace, alive)) {
                case KEEP_YOUNG, KEEP_ALIVE -> kept++;
                case FORGET -> {
                    if (etcd.deleteIfModRevision(kv.key(), kv.modRevision())) forgotten++;
                }
                case RELEASE -> {
                    String ipKey = Allocations.ipKey(prefix, e.range(), r.ip());
                    if (etcd.deleteAllIfUnchanged(kv.key(), kv.modRevision(), ipKey, Allocations.ownerValue(e.attachment()),
                            List.of(ipKey, ownerKey, kv.key()))) {
                        released++;
                    }
                }
            }
        }
        return new Outcome(released, forgotten, kept);
    }
}
