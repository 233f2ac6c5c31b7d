package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jcni.plugins.ipam.clusteripam.HostReconcile.Verdict;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The per-host index and the reconcile's decision, without etcd. */
class HostReconcileTest {
    static final Duration GRACE = Duration.ofMinutes(2);
    static final HostRecord R = new HostRecord(IpAddr.parse("10.70.0.7"), "/var/run/netns/c1", 4026532999L, 1_000_000);

    @Test
    void decision() {
        long old = R.createdMillis() + GRACE.toMillis();
        assertEquals(Verdict.RELEASE, HostReconcile.judge(R, "10.70.0.7", old, GRACE, r -> false), "namespace gone, old enough");
        assertEquals(Verdict.KEEP_ALIVE, HostReconcile.judge(R, "10.70.0.7", old, GRACE, r -> true));
        assertEquals(Verdict.KEEP_YOUNG, HostReconcile.judge(R, "10.70.0.7", old - 1, GRACE, r -> false), "its ADD may be running");
        assertEquals(Verdict.KEEP_YOUNG, HostReconcile.judge(R, "10.70.0.7", R.createdMillis() - 5000, GRACE, r -> false),
                "a clock that went back: young");
        assertEquals(Verdict.FORGET, HostReconcile.judge(R, null, old, GRACE, r -> true), "allocation released elsewhere");
        assertEquals(Verdict.FORGET, HostReconcile.judge(R, "10.70.0.8", old, GRACE, r -> true), "re-made with another address");
        assertEquals(Verdict.FORGET, HostReconcile.judge(null, "10.70.0.7", old, GRACE, r -> true), "unreadable entry");
    }

    @Test
    void recordsAndKeys() {
        assertEquals(R, HostRecord.decode(R.encode()));
        assertNull(HostRecord.decode("{\"ip\":\"x\"}"));
        assertNull(HostRecord.decode("not json"));
        Cidr range = Cidr.parse("10.70.0.0/16");
        Attachment a = new Attachment("cid-1", "eth0");
        String k = Allocations.hostKey("/jcni/ipam", "node-1", range, a);
        assertEquals("/jcni/ipam/hosts/node-1/10.70.0.0-16/cid-1/eth0", k);
        assertEquals(new Allocations.HostEntry(range, a), Allocations.hostEntryOf("/jcni/ipam", "node-1", k));
        assertNull(Allocations.hostEntryOf("/jcni/ipam", "node-2", k));
        assertNull(Allocations.hostEntryOf("/jcni/ipam", "node-1", "/jcni/ipam/hosts/node-1/10.70.0.0-16/cid-1"));
        assertNull(Allocations.hostEntryOf("/jcni/ipam", "node-1", "/jcni/ipam/hosts/node-1/bogus/cid-1/eth0"));
    }

    @Test
    void hostComesFromTheConfigOrTheHostname() {
        ClusterIpamConfig c = ClusterIpamConfig.parse(Json.parseObject(
                "{\"name\":\"n\",\"ipam\":{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"host\":\"node-7\"}}"));
        assertEquals("node-7", c.host());
        ClusterIpamConfig d = ClusterIpamConfig.parse(Json.parseObject("{\"name\":\"n\",\"ipam\":{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\"}}"));
        assertEquals(ClusterIpamConfig.hostname(), d.host());
        assertEquals(7, assertThrows(CniException.class, () -> ClusterIpamConfig.parse(Json.parseObject(
                "{\"name\":\"n\",\"ipam\":{\"etcdEndpoints\":[\"http://a:1\"],\"range\":\"10.70.0.0/24\",\"host\":\"a/b\"}}"))).code());
    }
}
