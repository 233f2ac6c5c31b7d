package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * cluster-ipam against a real etcd whose owner key for an attachment holds no address: ADD fails at
 * once with 11 naming the key (instead of spinning through every attempt to "too much contention"),
 * DEL clears the key, and the ADD after it gets an address.
 */
@Tag("root")
class ClusterIpamDamagedRecordTest {
    private static final String RANGE = "10.73.0.0/24";
    private static final String OWNER = "/lab-ipam/10.73.0.0-24/owners/damaged/eth0";

    @Test
    void aDamagedOwnerKeyIsNamedInErrorElevenAndDelClearsIt() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.66.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            lab.addHost(1);
            assertEquals(0, lab.etcdctl("put", OWNER, "not-an-address\nFAIL forged").exit());

            String add = one(lab, "ADD");
            assertTrue(add.startsWith("ERR damaged "), add);
            assertTrue(add.contains("\"code\": 11,"), add);
            assertTrue(add.contains("damaged allocation record " + OWNER), add);
            assertTrue(add.contains("not-an-address\\\\x0aFAIL forged"), "the value is shown escaped: " + add);
            assertEquals(0, lab.etcdctl("get", "--prefix", "--keys-only", "/lab-ipam/10.73.0.0-24/ips/").stdout().strip().length(),
                    "no address was taken");

            assertTrue(one(lab, "DEL").startsWith("OK "), "DEL clears the damaged record");
            assertEquals("", lab.etcdctl("get", OWNER).stdout().strip());
            String again = one(lab, "ADD");
            assertTrue(again.startsWith("OK damaged 10.73.0."), again);
        }
    }

    private static String one(Lab lab, String cmd) throws Exception {
        List<String> c = lab.inHost(1, Jvm.command(Launcher.Kind.PLUGIN, IpamLoad.class.getName(), "one", Lab.ETCD, RANGE, cmd,
                "damaged", "/var/run/netns/" + lab.host(1), "h1"));
        return Lab.run(c).stdout().strip();
    }
}
