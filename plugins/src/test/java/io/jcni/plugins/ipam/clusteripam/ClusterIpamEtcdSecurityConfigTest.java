package io.jcni.plugins.ipam.clusteripam;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniException;
import io.jcni.types.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** cluster-ipam's keys for a secured etcd; the password only ever from a file. */
class ClusterIpamEtcdSecurityConfigTest {
    private static ClusterIpamConfig parse(String extra) {
        return ClusterIpamConfig.parse(Json.parseObject("{\"name\":\"n\",\"ipam\":{\"type\":\"cluster-ipam\",\"etcdEndpoints\":\"https://10.0.0.1:2379\","
                + "\"range\":\"10.70.0.0/16\",\"host\":\"h\"" + extra + "}}"));
    }

    @Test
    void tlsFilesAndUser() {
        ClusterIpamConfig c = parse(",\"etcdCACertFile\":\"/p/ca.pem\",\"etcdCertFile\":\"/p/c.pem\",\"etcdKeyFile\":\"/p/c.key\","
                + "\"etcdUsername\":\"ipam\",\"etcdPasswordFile\":\"/p/pw\"");
        assertEquals(Path.of("/p/ca.pem"), c.etcdSecurity().caFile());
        assertEquals(Path.of("/p/c.pem"), c.etcdSecurity().certFile());
        assertEquals(Path.of("/p/c.key"), c.etcdSecurity().keyFile());
        assertEquals("ipam", c.etcdSecurity().username());
        assertNull(c.etcdSecurity().password(), "read when connecting, not kept in the config");
        assertEquals(Path.of("/p/pw"), c.etcdPasswordFile());
        assertNull(parse("").etcdSecurity().caFile());
    }

    @Test
    void halfSettingsAndInlinePasswordsAreRefused() {
        for (String bad : new String[] {",\"etcdCertFile\":\"/c.pem\"", ",\"etcdKeyFile\":\"/c.key\"", ",\"etcdUsername\":\"u\"",
                ",\"etcdPasswordFile\":\"/pw\"", ",\"etcdUsername\":\"u\",\"etcdPassword\":\"secret\""}) {
            CniException e = assertThrows(CniException.class, () -> parse(bad), bad);
            assertEquals(7, e.code(), bad);
            assertTrue(e.getMessage().contains("ipam.etcd"), e.getMessage());
        }
        assertTrue(assertThrows(CniException.class, () -> parse(",\"etcdUsername\":\"u\",\"etcdPassword\":\"secret\""))
                .getMessage().contains("put the password in a file"));
    }
}
