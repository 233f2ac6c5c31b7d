package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.etcd.EtcdAuthException;
import io.jcni.etcd.EtcdException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.Test;

class ClientsTest {
    @Test
    void whatACallRepeatsOnANewClient() {
        assertTrue(Clients.worthRepeating(new IOException("etcd closed the connection before answering (EOF)")), "a kept connection etcd closed");
        assertTrue(Clients.worthRepeating(new IOException("x", new SocketTimeoutException("answer not whole within the timeout"))), "a timeout");
        assertFalse(Clients.worthRepeating(new IOException("x", new ConnectException("Connection refused"))), "etcd is not there: no use");
        assertFalse(Clients.worthRepeating(new EtcdAuthException("etcd x: wrong password")), "a wrong password stays wrong");
        assertFalse(Clients.worthRepeating(new EtcdException("etcd x: etcdserver: request is too large")), "etcd refused the request itself");
        assertTrue(Clients.worthRepeating(EtcdException.answered("etcd http://10.0.0.1:2379/v3/kv/txn", "context canceled")),
                "etcd gave up on the request (under load): every cluster-ipam call may be repeated");
    }
}
