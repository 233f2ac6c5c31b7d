package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Dual-stack and IPv6-only leases as flanneld writes them, and what the agent makes of them (pure parts). */
class DualStackLeaseTest {
    private static final String P = "/coreos.com/network";
    private static final NetworkConfig DUAL = NetworkConfig.parse(
            "{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\",\"Backend\":{\"Type\":\"vxlan\"}}");
    private static final NetworkConfig V6ONLY = NetworkConfig.parse(
            "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\",\"Backend\":{\"Type\":\"vxlan\"}}");
    /** A lease exactly as flanneld's vxlan backend writes it (LeaseAttrs field order and casing). */
    private static final String FLANNELD_DUAL = "{\"PublicIP\":\"192.168.77.12\",\"PublicIPv6\":\"fd77::12\",\"BackendType\":\"vxlan\","
            + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"9e:12:34:56:78:9a\"},\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"9e:12:34:56:78:9b\"}}";

    @Test
    void keysAsMakeSubnetKey() {
        assertEquals(P + "/subnets/10.244.1.0-24&fd00:10:244:1::-64",
                Lease.key(P, Cidr.parse("10.244.1.0/24"), Cidr.parse("fd00:10:244:1::/64")));
        assertEquals(P + "/subnets/0.0.0.0-0&fd00:10:244:1::-64", Lease.key(P, null, Cidr.parse("fd00:10:244:1::/64")), "IPv6-only");
        assertEquals(P + "/subnets/10.244.1.0-24", Lease.key(P, Cidr.parse("10.244.1.0/24")));
    }

    @Test
    void keysAsParseSubnetKey() {
        Lease.SubnetKey k = Lease.parseKey(P, P + "/subnets/10.244.1.0-24&fd00:10:244:1::-64");
        assertEquals(new Lease.SubnetKey(Cidr.parse("10.244.1.0/24"), Cidr.parse("fd00:10:244:1::/64")), k);
        assertEquals(new Lease.SubnetKey(Lease.NO_SUBNET, Cidr.parse("fd00:10:244:1::/64")), Lease.parseKey(P, P + "/subnets/0.0.0.0-0&fd00:10:244:1::-64"));
        assertEquals(Cidr.parse("fd00:10:244:1::/64"), Lease.subnetOfKey(P, P + "/subnets/0.0.0.0-0&fd00:10:244:1::-64"));
        assertEquals(new Lease.SubnetKey(Cidr.parse("10.244.1.0/24"), null), Lease.parseKey(P, P + "/subnets/10.244.1.0-24"));
        assertNull(Lease.parseKey(P, P + "/subnets/10.244.1.0-24&FD00::-64"), "flanneld's regex is lower-case hex");
        assertNull(Lease.parseKey(P, P + "/subnets/10.244.1.0-24&10.1.0.0-16"));
        assertNull(Lease.parseKey(P, P + "/subnets/fd00::-64"));
        assertNull(Lease.parseKey(P, P + "/subnets/10.244.1.0-24&"));
        assertNull(Lease.parseKey(P, "/other/subnets/10.244.1.0-24"));
    }

    @Test
    void flanneldsDualStackLeaseParses() {
        Lease l = Lease.parse(Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64"), FLANNELD_DUAL);
        assertEquals(new Lease(Cidr.parse("10.244.2.0/24"), IpAddr.parse("192.168.77.12"), "vxlan", 1, "9e:12:34:56:78:9a",
                Cidr.parse("fd00:10:244:2::/64"), IpAddr.parse("fd77::12"), "9e:12:34:56:78:9b"), l);
        assertEquals(FLANNELD_DUAL, l.value(), "and jcni writes the same bytes");
        assertEquals(Cidr.parse("10.244.2.0/24"), l.id());
        Lease lower = Lease.parse(Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64"), FLANNELD_DUAL.replace("PublicIPv6", "publicipv6")
                .replace("BackendV6Data", "backendv6data"));
        assertEquals(l, lower, "keys match case-insensitively, as Go's encoding/json");
    }

    @Test
    void ipv6OnlyLease() {
        Lease mine = new Lease(Lease.NO_SUBNET, Lease.NO_PUBLIC_IP, "vxlan", 1, null, Cidr.parse("fd00:10:244:3::/64"), IpAddr.parse("fd77::13"),
                "9e:00:00:00:00:03");
        assertEquals("{\"PublicIP\":\"0.0.0.0\",\"PublicIPv6\":\"fd77::13\",\"BackendType\":\"vxlan\",\"BackendData\":null,"
                + "\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"9e:00:00:00:00:03\"}}", mine.value());
        assertEquals(P + "/subnets/0.0.0.0-0&fd00:10:244:3::-64", mine.key(P));
        Lease back = Lease.parse(Lease.parseKey(P, mine.key(P)), mine.value());
        assertEquals(mine, back);
        assertEquals(Cidr.parse("fd00:10:244:3::/64"), back.id());
        assertFalse(back.hasV4());
    }

    @Test
    void unusableLeasesAreRefusedWithAReason() {
        Lease.SubnetKey dual = Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64");
        String noV6 = FLANNELD_DUAL.replace("\"fd77::12\"", "null");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Lease.parse(dual, noV6)).getMessage().contains("PublicIPv6"));
        String noV6Mac = FLANNELD_DUAL.replaceAll(",\"BackendV6Data\":\\{[^}]*\\}", "");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Lease.parse(dual, noV6Mac)).getMessage().contains("BackendV6Data"));
        assertThrows(IllegalArgumentException.class, () -> Lease.parse(dual, "{garbage"));
    }

    @Test
    void aNetworkUsesOnlyItsFamilies() {
        Lease l = Lease.parse(Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64"), FLANNELD_DUAL);
        assertFalse(l.forNetwork(true, false).hasV6(), "an IPv4-only network ignores the IPv6 half");
        Lease v6 = l.forNetwork(false, true);
        assertFalse(v6.hasV4());
        assertEquals(Cidr.parse("fd00:10:244:2::/64"), v6.id());
        assertEquals(l, l.forNetwork(true, true));
    }

    @Test
    void bothFamiliesArePickedFree() {
        Lease taken = Lease.parse(Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64"), FLANNELD_DUAL);
        for (int seed = 0; seed < 50; seed++) {
            Cidr six = SubnetChoice.pickV6(DUAL, List.of(taken), null, List.of(), new Random(seed)).orElseThrow();
            assertTrue(DUAL.leasable(six) && !six.equals(taken.ipv6Subnet()), six.toString());
        }
        assertEquals(Cidr.parse("fd00:10:244:9::/64"),
                SubnetChoice.pickV6(V6ONLY, List.of(taken), Cidr.parse("fd00:10:244:9::1/64"), List.of(), new Random(1)).orElseThrow(), "the previous one");
        Lease own = Lease.parse(Lease.parseKey(P, P + "/subnets/0.0.0.0-0&fd00:10:244:2::-64"), FLANNELD_DUAL.replace("192.168.77.12", "0.0.0.0")
                .replaceAll("\"BackendData\":\\{[^}]*\\}", "\"BackendData\":null"));
        assertEquals(own, SubnetChoice.ownLease(List.of(own), IpAddr.parse("fd77::12")).orElseThrow(), "IPv6-only: found by PublicIPv6");
    }

    @Test
    void remotePlanPerFamily() {
        Lease l = Lease.parse(Lease.parseKey(P, P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64"), FLANNELD_DUAL);
        List<RemotePlan> plans = RemotePlan.of(l, DUAL, ip -> false);
        assertEquals(List.of(
                new RemotePlan(Cidr.parse("10.244.2.0/24"), IpAddr.parse("10.244.2.0"), true, "9e:12:34:56:78:9a", IpAddr.parse("192.168.77.12")),
                new RemotePlan(Cidr.parse("fd00:10:244:2::/64"), IpAddr.parse("fd00:10:244:2::"), true, "9e:12:34:56:78:9b", IpAddr.parse("fd77::12"))),
                plans);
        assertEquals(1, RemotePlan.of(l, V6ONLY, ip -> false).size());
        NetworkConfig direct = NetworkConfig.parse("{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\","
                + "\"Backend\":{\"Type\":\"vxlan\",\"DirectRouting\":true}}");
        List<RemotePlan> d = RemotePlan.of(l, direct, ip -> ip.isV6());
        assertTrue(d.get(0).overVxlan(), "IPv4 underlay not on link here");
        assertEquals(new RemotePlan(Cidr.parse("fd00:10:244:2::/64"), IpAddr.parse("fd77::12"), false, "9e:12:34:56:78:9b", IpAddr.parse("fd77::12")),
                d.get(1), "IPv6 DirectRouting: via PublicIPv6");
        NetworkConfig hostGw = NetworkConfig.parse("{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\","
                + "\"Backend\":{\"Type\":\"host-gw\"}}");
        Lease hg = new Lease(l.subnet(), l.publicIp(), "host-gw", 0, null, l.ipv6Subnet(), l.publicIpv6(), null);
        assertEquals(new RemotePlan(Cidr.parse("fd00:10:244:2::/64"), IpAddr.parse("fd77::12"), false, null, null),
                RemotePlan.of(hg, hostGw, ip -> true).get(1));
    }

    @Test
    void validatorJudgesTheIpv6Half() {
        var local = new LeaseValidator.Local(DUAL, Cidr.parse("10.244.1.0/24"), IpAddr.parse("192.168.77.11"), List.of(Cidr.parse("192.168.77.0/24"),
                Cidr.parse("fd77::/64")), "9e:00:00:00:00:01", Cidr.parse("fd00:10:244:1::/64"), IpAddr.parse("fd77::11"), "9e:00:00:00:00:02");
        String key = P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64";
        Lease good = Lease.parse(Lease.parseKey(P, key), FLANNELD_DUAL);
        assertNull(LeaseValidator.problem(local, cand(key, good)));
        assertEquals("PublicIPv6 fd77::11 is this host's", LeaseValidator.problem(local, cand(key,
                Lease.parse(Lease.parseKey(P, key), FLANNELD_DUAL.replace("fd77::12", "fd77::11")))));
        assertEquals("PublicIPv6 fe80::1 is link-local", LeaseValidator.problem(local, cand(key,
                Lease.parse(Lease.parseKey(P, key), FLANNELD_DUAL.replace("fd77::12", "fe80::1")))));
        assertEquals("PublicIPv6 fd00:10:244:9::1 is inside the overlay network fd00:10:244::/56", LeaseValidator.problem(local, cand(key,
                Lease.parse(Lease.parseKey(P, key), FLANNELD_DUAL.replace("fd77::12", "fd00:10:244:9::1")))));
        assertEquals("BackendV6Data.VtepMAC 9e:00:00:00:00:02 is this host's own VTEP", LeaseValidator.problem(local, cand(key,
                Lease.parse(Lease.parseKey(P, key), FLANNELD_DUAL.replace("9e:12:34:56:78:9b", "9e:00:00:00:00:02")))));
        String own6 = P + "/subnets/10.244.2.0-24&fd00:10:244:1::-64";
        assertEquals("overlaps this host's IPv6 subnet fd00:10:244:1::/64", LeaseValidator.problem(local, cand(own6, Lease.parse(Lease.parseKey(P, own6), FLANNELD_DUAL))));
        String unaligned = P + "/subnets/10.244.2.0-24&fd00:10:244:2::5-64";
        assertEquals("the key's IPv6 subnet is not a subnet's network address",
                LeaseValidator.problem(local, cand(unaligned, Lease.parse(Lease.parseKey(P, unaligned), FLANNELD_DUAL))));
        String wrongLen = P + "/subnets/10.244.2.0-24&fd00:10:244:2::-80";
        assertEquals("IPv6 prefix length 80, the network leases /64",
                LeaseValidator.problem(local, cand(wrongLen, Lease.parse(Lease.parseKey(P, wrongLen), FLANNELD_DUAL))));
        String v4only = P + "/subnets/10.244.3.0-24";
        Lease flanneldV4 = Lease.parse(Lease.parseKey(P, v4only), "{\"PublicIP\":\"192.168.77.13\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\","
                + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"9e:00:00:00:00:13\"}}");
        assertNull(LeaseValidator.problem(local, cand(v4only, flanneldV4)), "a dual-stack network takes an IPv4-only host (its IPv4 half)");
        var local6 = new LeaseValidator.Local(V6ONLY, null, null, List.of(), null, Cidr.parse("fd00:10:244:1::/64"), IpAddr.parse("fd77::11"), "9e:00:00:00:00:02");
        assertEquals("no IPv6 subnet, and the network is IPv6-only", LeaseValidator.problem(local6, cand(v4only, flanneldV4)));
    }

    @Test
    void anOlderLeaseKeepsItsIpv6Subnet() {
        var local = new LeaseValidator.Local(DUAL, Cidr.parse("10.244.1.0/24"), IpAddr.parse("192.168.77.11"), List.of(), "9e:00:00:00:00:01",
                Cidr.parse("fd00:10:244:1::/64"), IpAddr.parse("fd77::11"), "9e:00:00:00:00:02");
        String k1 = P + "/subnets/10.244.2.0-24&fd00:10:244:2::-64", k2 = P + "/subnets/10.244.3.0-24&fd00:10:244:2::-64";
        Lease a = Lease.parse(Lease.parseKey(P, k1), FLANNELD_DUAL);
        Lease b = Lease.parse(Lease.parseKey(P, k2), FLANNELD_DUAL.replace("192.168.77.12", "192.168.77.13").replace("fd77::12", "fd77::13")
                .replace("78:9a", "78:0a").replace("78:9b", "78:0b"));
        LeaseBook book = new LeaseBook();
        book.put(new LeaseValidator.Checked(new LeaseValidator.Candidate(k2, Cidr.parse("10.244.3.0/24"), 20, b, Cidr.parse("fd00:10:244:2::/64")),
                LeaseValidator.problem(local, cand(k2, b))));
        assertTrue(book.accepted().containsKey(Cidr.parse("10.244.3.0/24")));
        book.put(new LeaseValidator.Checked(new LeaseValidator.Candidate(k1, Cidr.parse("10.244.2.0/24"), 10, a, Cidr.parse("fd00:10:244:2::/64")),
                LeaseValidator.problem(local, cand(k1, a))));
        assertTrue(book.accepted().containsKey(Cidr.parse("10.244.2.0/24")), "the older one");
        assertFalse(book.accepted().containsKey(Cidr.parse("10.244.3.0/24")), "the newer one shares its IPv6 subnet");
        assertEquals("its subnet fd00:10:244:2::/64 is already claimed by the older lease " + k1, book.rejected().get(k2));
        book.remove(k1);
        assertTrue(book.accepted().containsKey(Cidr.parse("10.244.3.0/24")), "accepted once the older one goes");
    }

    private static LeaseValidator.Candidate cand(String key, Lease l) {
        Lease.SubnetKey k = Lease.parseKey(P, key);
        return new LeaseValidator.Candidate(key, k.v4(), 1, l, k.v6());
    }

    @Test
    void subnetEnvAsWriteSubnetFile() {
        assertEquals("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_IPV6_NETWORK=fd00:10:244::/56\n"
                + "FLANNEL_IPV6_SUBNET=fd00:10:244:1::1/64\nFLANNEL_MTU=1430\nFLANNEL_IPMASQ=true\n",
                SubnetEnv.format(Cidr.parse("10.244.0.0/16"), Cidr.parse("10.244.1.0/24"), Cidr.parse("fd00:10:244::/56"), Cidr.parse("fd00:10:244:1::/64"),
                        1430, true));
        String v6only = SubnetEnv.format(null, null, Cidr.parse("fd00:10:244::/56"), Cidr.parse("fd00:10:244:1::/64"), 1430, false);
        assertEquals("FLANNEL_IPV6_NETWORK=fd00:10:244::/56\nFLANNEL_IPV6_SUBNET=fd00:10:244:1::1/64\nFLANNEL_MTU=1430\nFLANNEL_IPMASQ=false\n", v6only);
        assertEquals(Cidr.parse("fd00:10:244:1::1/64"), SubnetEnv.cidr(v6only, "FLANNEL_IPV6_SUBNET"));
        assertNull(SubnetEnv.cidr(v6only, "FLANNEL_SUBNET"));
        assertEquals(new io.jcni.plugins.meta.flannel.SubnetFile(Cidr.parse("10.5.0.0/16"), Cidr.parse("10.5.1.0/24"), 1450, false).format(),
                SubnetEnv.format(Cidr.parse("10.5.0.0/16"), Cidr.parse("10.5.1.0/24"), null, null, 1450, false), "IPv4 only: the same four lines as before");
    }

    @Test
    void ipv6Masquerade() {
        String nft = OverlayMasq.setup(Cidr.parse("10.244.0.0/16"), Cidr.parse("10.244.1.0/24"), Cidr.parse("fd00:10:244::/56"),
                Cidr.parse("fd00:10:244:1::/64"));
        assertTrue(nft.contains("add rule inet jcni overlay_masq ip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random\n"), nft);
        assertTrue(nft.contains("add rule inet jcni overlay_masq ip6 saddr fd00:10:244::/56 ip6 daddr fd00:10:244::/56 return\n"), nft);
        assertTrue(nft.contains("add rule inet jcni overlay_masq ip6 saddr fd00:10:244::/56 ip6 daddr != ff00::/8 masquerade fully-random\n"), nft);
        assertTrue(nft.contains("add rule inet jcni overlay_masq ip6 saddr != fd00:10:244::/56 ip6 daddr fd00:10:244:1::/64 return\n"), nft);
        assertTrue(nft.contains("add rule inet jcni overlay_masq ip6 saddr != fd00:10:244::/56 ip6 daddr fd00:10:244::/56 masquerade fully-random\n"), nft);
        String only6 = OverlayMasq.setup(null, null, Cidr.parse("fd00:10:244::/56"), Cidr.parse("fd00:10:244:1::/64"));
        assertFalse(only6.contains(" ip saddr"), only6);
    }
}
