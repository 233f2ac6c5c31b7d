package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The agent's periodic cluster-ipam reconcile against a real etcd, without any GC call: on host 1
 * (grace 1 s, every second) an allocation whose container namespace is deleted is released, and
 * one whose namespace never existed; the allocation of a live namespace stays. Host 2's agent has a
 * long grace: its allocation, whose namespace is gone too, stays (an ADD may still be running), and
 * host 1 never touches another host's allocations. An index entry whose allocation was released
 * elsewhere is dropped.
 */
@Tag("root")
class IpamReconcileLabTest {
    private static final String RANGE = "10.73.0.0/24";
    private static final String IPAM = "/lab-ipam/10.73.0.0-24/";

    @Test
    void allocationsOfGoneNamespacesAreReleasedByTheirHostOnly() throws Exception {
        try (Lab lab = new Lab()) {
            lab.start("{\"Network\":\"10.66.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}");
            lab.addHost(1);
            lab.addHost(2);
            String c1 = "jo-" + lab.sfx + "-c1", c2 = "jo-" + lab.sfx + "-c2", c3 = "jo-" + lab.sfx + "-c3";
            for (String c : List.of(c1, c2, c3)) lab.netns(c);
            assertTrue(one(lab, 1, "ADD", "gone", "/var/run/netns/" + c1, "h1").startsWith("OK "));
            assertTrue(one(lab, 1, "ADD", "alive", "/var/run/netns/" + c2, "h1").startsWith("OK "));
            assertTrue(one(lab, 1, "ADD", "never", "/var/run/netns/jo-" + lab.sfx + "-none", "h1").startsWith("OK "));
            assertTrue(one(lab, 2, "ADD", "young", "/var/run/netns/" + c3, "h2").startsWith("OK "));
            assertEquals(List.of("alive", "gone", "never", "young"), owners(lab));
            assertEquals(3, keys(lab, "/lab-ipam/hosts/h1/").size());

            Lab.run(List.of("ip", "netns", "delete", c1));
            Lab.run(List.of("ip", "netns", "delete", c3));
            lab.startAgent(1, "--ipam-prefix", "/lab-ipam", "--ipam-host", "h1", "--ipam-reconcile-every", "1", "--ipam-grace", "1");
            lab.startAgent(2, "--ipam-prefix", "/lab-ipam", "--ipam-host", "h2", "--ipam-reconcile-every", "1", "--ipam-grace", "3600");
            Lab.waitFor("host 1 releases the allocations of gone namespaces\n" + lab.log(1), Duration.ofSeconds(60),
                    () -> owners(lab).equals(List.of("alive", "young")));
            assertEquals(List.of("alive", "young"), owners(lab));
            assertEquals(2, keys(lab, IPAM + "ips/").size());
            assertEquals(1, keys(lab, "/lab-ipam/hosts/h1/").size());
            assertEquals(1, keys(lab, "/lab-ipam/hosts/h2/").size());
            assertTrue(lab.log(1).contains("msg=\"cluster-ipam reconcile\" host=h1 released="), lab.log(1)); // one round or two
            assertTrue(!lab.log(2).contains("released="), lab.log(2));

            // an allocation released elsewhere (a GC from another host deletes only its keys): host 1 drops its index entry
            String orphan = one(lab, 1, "ADD", "orphan", "/var/run/netns/" + c2, "h1");
            assertTrue(orphan.startsWith("OK "), orphan);
            assertEquals(0, lab.etcdctl("del", IPAM + "owners/orphan/eth0").exit());
            assertEquals(0, lab.etcdctl("del", IPAM + "ips/" + orphan.split(" ")[2]).exit());
            Lab.waitFor("host 1 drops the index entry of an allocation released elsewhere", Duration.ofSeconds(60),
                    () -> keys(lab, "/lab-ipam/hosts/h1/").size() == 1);

            // DEL keeps the index clean too; a DEL of what the reconcile released is a no-op
            assertTrue(one(lab, 1, "DEL", "alive", "/var/run/netns/" + c2, "h1").startsWith("OK "));
            assertTrue(one(lab, 1, "DEL", "gone", "", "h1").startsWith("OK "));
            assertEquals(List.of("young"), owners(lab));
            assertEquals(0, keys(lab, "/lab-ipam/hosts/h1/").size());
        }
    }

    private static String one(Lab lab, int host, String cmd, String id, String netns, String hostName) throws Exception {
        List<String> c = lab.inHost(host, Jvm.command(Launcher.Kind.PLUGIN, IpamLoad.class.getName(), "one", Lab.ETCD, RANGE, cmd,
                id, netns, hostName));
        return Lab.run(c).stdout().strip();
    }

    private static List<String> owners(Lab lab) throws Exception {
        List<String> out = new ArrayList<>();
        for (String k : keys(lab, IPAM + "owners/")) out.add(k.substring((IPAM + "owners/").length(), k.lastIndexOf('/')));
        return out.stream().sorted().toList();
    }

    private static List<String> keys(Lab lab, String prefix) throws Exception {
        Lab.Out o = lab.etcdctl("get", "--prefix", "--keys-only", prefix);
        assertEquals(0, o.exit(), o.stdout());
        return o.stdout().lines().filter(l -> !l.isBlank()).toList();
    }
}
