package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EtcdExceptionTest {
    @Test
    void etcdGivingUpOnARequestIsTransientARefusalIsNot() {
        for (String gaveUp : new String[] {"context canceled", "context deadline exceeded", "etcdserver: request timed out",
                "etcdserver: leader changed", "etcdserver: too many requests"}) {
            EtcdException e = EtcdException.answered("etcd http://10.0.0.1:2379/v3/kv/txn", gaveUp);
            assertTrue(e.isTransient(), gaveUp);
            assertEquals("etcd http://10.0.0.1:2379/v3/kv/txn: " + gaveUp, e.getMessage());
        }
        for (String refused : new String[] {"etcdserver: too many operations in txn request", "etcdserver: duplicate key given in txn request",
                "etcdserver: request is too large", "etcdserver: mvcc: required revision has been compacted"}) {
            assertFalse(EtcdException.answered("etcd x", refused).isTransient(), refused);
        }
        assertFalse(new EtcdException("watch canceled by etcd").isTransient(), "the client's own judgements are not etcd giving up");
    }
}
