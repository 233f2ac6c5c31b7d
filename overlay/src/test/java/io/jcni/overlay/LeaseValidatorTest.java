package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.overlay.LeaseValidator.Candidate;
import io.jcni.overlay.LeaseValidator.Local;
import io.jcni.overlay.LeaseValidator.Verdict;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The red team's leases and their relatives: each is refused with a reason; good ones pass; age decides overlaps. */
class LeaseValidatorTest {
    private static final String P = "/coreos.com/network";
    private static final NetworkConfig VXLAN = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":1}}");
    private static final NetworkConfig HOST_GW = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}");
    private static final Cidr UNDERLAY = Cidr.parse("192.168.78.0/24");
    private static final Local HOST = new Local(VXLAN, Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.78.2"), List.of(UNDERLAY),
            "0a:00:00:00:01:01");
    private static final Local HOST_GW_HOST = new Local(HOST_GW, Cidr.parse("10.5.1.0/24"), IpAddr.parse("192.168.78.2"), List.of(UNDERLAY), null);

    private static int revision = 100;

    @Test
    void aWellFormedLeaseOfAnotherHostIsAccepted() {
        Candidate good = vxlan("10.5.2.0-24", "192.168.78.3", "0a:00:00:00:02:02");
        Verdict v = LeaseValidator.judge(HOST, List.of(good));
        assertEquals(Map.of(good.lease().subnet(), good.lease()), v.accepted());
        assertTrue(v.rejected().isEmpty());
        Candidate gw = hostGw("10.5.3.0-24", "192.168.78.4");
        assertEquals(1, LeaseValidator.judge(HOST_GW_HOST, List.of(gw)).accepted().size());
        // flanneld's older values carry no VNI: accepted
        Candidate noVni = candidate("10.5.4.0-24", new Lease(Cidr.parse("10.5.4.0/24"), IpAddr.parse("192.168.78.5"), "vxlan", 0, "0a:00:00:00:04:04"));
        assertEquals(1, LeaseValidator.judge(HOST, List.of(noVni)).accepted().size());
    }

    @Test
    void theRedTeamsLeasesAreRefused() {
        assertRejected(HOST, vxlan("10.5.1.128-25", "192.168.78.66", "0a:00:00:00:66:66"), "prefix length 25"); // half of our own /24
        assertRejected(HOST, vxlan("10.5.1.0-024", "192.168.78.66", "0a:00:00:00:66:66"), "overlaps this host's subnet"); // our /24, spelled otherwise
        assertRejected(HOST, vxlan("192.168.78.0-24", "192.168.78.66", "0a:00:00:00:66:66"), "SubnetMin"); // the underlay
        assertRejected(HOST_GW_HOST, hostGw("0.0.0.0-0", "192.168.78.66"), "prefix length 0"); // every host's default route
    }

    @Test
    void theSubnetMustBeOneTheNetworkLeases() {
        assertRejected(HOST, vxlan("10.5.2.7-24", "192.168.78.3", "0a:00:00:00:02:02"), "network address");
        assertRejected(HOST, vxlan("10.5.0.0-24", "192.168.78.3", "0a:00:00:00:02:02"), "SubnetMin"); // flannel never leases the first
        assertRejected(HOST, vxlan("10.6.2.0-24", "192.168.78.3", "0a:00:00:00:02:02"), "SubnetMin");
        assertRejected(HOST, vxlan("10.5.0.0-16", "192.168.78.3", "0a:00:00:00:02:02"), "prefix length 16");
        NetworkConfig narrow = NetworkConfig.parse("{\"Network\":\"10.5.0.0/16\",\"SubnetMin\":\"10.5.10.0\",\"SubnetMax\":\"10.5.20.0\",\"Backend\":{\"Type\":\"vxlan\"}}");
        Local h = new Local(narrow, Cidr.parse("10.5.10.0/24"), HOST.publicIp(), HOST.underlay(), HOST.vtepMac());
        assertRejected(h, vxlan("10.5.9.0-24", "192.168.78.3", "0a:00:00:00:02:02"), "SubnetMin");
        assertRejected(h, vxlan("10.5.21.0-24", "192.168.78.3", "0a:00:00:00:02:02"), "SubnetMax");
        assertEquals(1, LeaseValidator.judge(h, List.of(vxlan("10.5.20.0-24", "192.168.78.3", "0a:00:00:00:02:02"))).accepted().size());
        assertRejected(HOST, hostGw("10.5.2.0-24", "192.168.78.3"), "backend host-gw");
    }

    @Test
    void aSubnetOverlappingTheUnderlayIsRefusedEvenWhenTheNetworkWouldLeaseIt() {
        NetworkConfig wide = NetworkConfig.parse("{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"host-gw\"}}");
        Local h = new Local(wide, Cidr.parse("10.1.1.0/24"), IpAddr.parse("192.168.78.2"), List.of(UNDERLAY, Cidr.parse("10.9.9.0/24")), null);
        assertRejected(h, hostGw("10.9.9.0-24", "192.168.78.3"), "overlaps the underlay network 10.9.9.0/24");
        Local bigUnderlay = new Local(wide, Cidr.parse("10.1.1.0/24"), IpAddr.parse("192.168.78.2"), List.of(Cidr.parse("10.8.0.0/14")), null);
        assertRejected(bigUnderlay, hostGw("10.9.9.0-24", "192.168.78.3"), "overlaps the underlay network 10.8.0.0/14");
    }

    @Test
    void thePublicIpMustBeAnotherHostsUnicastUnderlayAddress() {
        for (String ip : List.of("0.0.0.0", "0.1.2.3", "127.0.0.1", "127.9.9.9", "224.0.0.1", "239.1.1.1", "255.255.255.255", "240.0.0.1",
                "169.254.1.1", "10.5.7.7", "10.5.1.1", "192.168.78.2", "192.168.78.0", "192.168.78.255")) {
            assertRejected(HOST, vxlan("10.5.2.0-24", ip, "0a:00:00:00:02:02"), "PublicIP " + ip);
            assertRejected(HOST_GW_HOST, hostGw("10.5.2.0-24", ip), "PublicIP " + ip);
        }
        assertNull(LeaseValidator.publicIpProblem(IpAddr.parse("192.168.78.254"), VXLAN.network(), HOST.publicIp(), List.of(UNDERLAY)));
        assertNull(LeaseValidator.publicIpProblem(IpAddr.parse("172.16.0.9"), VXLAN.network(), HOST.publicIp(), List.of(UNDERLAY)), "routed underlay");
    }

    @Test
    void theVtepMacMustBeAUnicastMacThatIsNotOurs() {
        for (String mac : List.of("garbage", "0a:00:00:00:02", "00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "0A:00:00:00:01:01")) {
            assertRejected(HOST, vxlan("10.5.2.0-24", "192.168.78.3", mac), "VtepMAC");
        }
        Candidate otherVni = candidate("10.5.2.0-24", new Lease(Cidr.parse("10.5.2.0/24"), IpAddr.parse("192.168.78.3"), "vxlan", 7, "0a:00:00:00:02:02"));
        assertRejected(HOST, otherVni, "VNI 7");
    }

    @Test
    void theOlderOfTwoOverlappingLeasesWinsWhateverTheOrder() {
        Candidate older = vxlan("10.5.2.0-24", "192.168.78.3", "0a:00:00:00:02:02");
        Candidate newer = vxlan("10.5.2.0-024", "192.168.78.66", "0a:00:00:00:66:66");
        Candidate macThief = vxlan("10.5.3.0-24", "192.168.78.67", "0a:00:00:00:02:02");
        Candidate bystander = vxlan("10.5.4.0-24", "192.168.78.4", "0a:00:00:00:04:04");
        List<Candidate> all = new ArrayList<>(List.of(newer, macThief, bystander, older));
        for (int seed = 0; seed < 20; seed++) {
            Collections.shuffle(all, new Random(seed));
            Verdict v = LeaseValidator.judge(HOST, all);
            assertEquals(Map.of(older.lease().subnet(), older.lease(), bystander.lease().subnet(), bystander.lease()), v.accepted());
            assertTrue(v.rejected().get(newer.key()).contains("older lease " + older.key()), v.rejected().toString());
            assertTrue(v.rejected().get(macThief.key()).contains("VtepMAC is already used by the older lease " + older.key()), v.rejected().toString());
        }
        // the older goes: the newer ones are accepted
        Verdict after = LeaseValidator.judge(HOST, List.of(newer, macThief, bystander));
        assertEquals(3, after.accepted().size(), after.rejected().toString());
        assertEquals(newer.lease(), after.accepted().get(Cidr.parse("10.5.2.0/24")));
        // a refused old lease does not shadow a valid newer one
        Candidate badOld = vxlan("10.5.5.0-24", "127.0.0.1", "0a:00:00:00:05:05");
        revision -= 1000;
        Candidate badOlder = vxlan("10.5.6.0-24", "127.0.0.1", "0a:00:00:00:06:06");
        revision += 2000;
        Candidate goodNew = vxlan("10.5.5.0-024", "192.168.78.5", "0a:00:00:00:06:06");
        Verdict v = LeaseValidator.judge(HOST, List.of(goodNew, badOld, badOlder));
        assertEquals(List.of(goodNew.lease()), List.copyOf(v.accepted().values()));
    }

    @Test
    void eachRejectionIsLoggedOnceUntilItChanges() {
        Map<String, String> logged = new HashMap<>();
        assertEquals(Map.of("k1", "bad", "k2", "worse"), LeaseValidator.newlyRejected(logged, Map.of("k1", "bad", "k2", "worse")));
        assertEquals(Map.of(), LeaseValidator.newlyRejected(logged, Map.of("k1", "bad", "k2", "worse")), "a resync logs nothing again");
        assertEquals(Map.of("k2", "other"), LeaseValidator.newlyRejected(logged, Map.of("k1", "bad", "k2", "other")));
        assertEquals(Map.of(), LeaseValidator.newlyRejected(logged, Map.of("k2", "other")));
        assertEquals(Map.of("k1", "bad"), LeaseValidator.newlyRejected(logged, Map.of("k1", "bad", "k2", "other")), "gone and back: logged again");
    }

    private static void assertRejected(Local local, Candidate c, String reasonPart) {
        Verdict v = LeaseValidator.judge(local, List.of(c));
        assertTrue(v.accepted().isEmpty(), c.key() + " accepted");
        String why = v.rejected().get(c.key());
        assertNotNull(why, c.key());
        if (reasonPart != null) assertTrue(why.contains(reasonPart), c.key() + ": " + why);
    }

    private static Candidate vxlan(String keyName, String publicIp, String mac) {
        Cidr sn = keySubnet(keyName);
        return candidate(keyName, new Lease(sn.masked(), IpAddr.parse(publicIp), "vxlan", 1, mac));
    }

    private static Candidate hostGw(String keyName, String publicIp) {
        Cidr sn = keySubnet(keyName);
        return candidate(keyName, new Lease(sn.masked(), IpAddr.parse(publicIp), "host-gw", 0, null));
    }

    private static Candidate candidate(String keyName, Lease l) {
        String key = P + "/subnets/" + keyName;
        return new Candidate(key, keySubnet(keyName), revision++, l);
    }

    private static Cidr keySubnet(String keyName) {
        return Lease.subnetOfKey(P, P + "/subnets/" + keyName);
    }
}
