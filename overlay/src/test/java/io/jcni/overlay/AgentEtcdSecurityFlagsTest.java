package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.etcd.EtcdSecurity;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** flanneld's etcd TLS and user flags, as jcnid --overlay takes them. */
class AgentEtcdSecurityFlagsTest {
    @Test
    void flanneldsFlagsAreTaken() {
        AgentOptions o = AgentOptions.parse(List.of("--etcd-endpoints", "https://10.0.0.1:2379", "--etcd-cafile", "/etc/ssl/etcd/ca.pem",
                "--etcd-certfile", "/etc/ssl/etcd/node.pem", "--etcd-keyfile", "/etc/ssl/etcd/node-key.pem", "--etcd-username", "flannel",
                "--etcd-password", "pw"));
        EtcdSecurity s = o.etcdSecurity();
        assertEquals(Path.of("/etc/ssl/etcd/ca.pem"), s.caFile());
        assertEquals(Path.of("/etc/ssl/etcd/node.pem"), s.certFile());
        assertEquals(Path.of("/etc/ssl/etcd/node-key.pem"), s.keyFile());
        assertEquals("flannel", s.username());
        assertEquals("pw", s.password());
        assertTrue(!s.toString().contains("pw"), "the password is never printed: " + s);
        assertTrue(AgentOptions.VALUE_FLAGS.containsAll(EtcdSecurity.FLAGS), "jcnid's option parser knows them");
        assertNull(AgentOptions.parse(List.of()).etcdSecurity().caFile());
    }

    @Test
    void halfASettingIsRefused() {
        var certOnly = assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--etcd-certfile", "/c.pem")));
        assertTrue(certOnly.getMessage().contains("--etcd-certfile and --etcd-keyfile go together"), certOnly.getMessage());
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--etcd-password", "x")));
        assertThrows(IllegalArgumentException.class, () -> AgentOptions.parse(List.of("--etcd-username", "u")));
        var scheme = assertThrows(IllegalArgumentException.class,
                () -> new io.jcni.etcd.EtcdClient(List.of("ftp://10.0.0.1:2379"), java.time.Duration.ofSeconds(1)));
        assertTrue(scheme.getMessage().contains("https://"), scheme.getMessage());
    }
}
