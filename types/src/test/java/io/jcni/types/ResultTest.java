package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ResultTest {

    static final String V110 = """
        {"cniVersion":"1.1.0",
         "interfaces":[{"name":"cni0","mac":"aa:bb:cc:dd:ee:01"},
                       {"name":"eth0","mac":"aa:bb:cc:dd:ee:02","mtu":1400,"sandbox":"/var/run/netns/c1","socketPath":"/s","pciID":"0000:00:01.0"}],
         "ips":[{"interface":1,"address":"10.1.0.5/16","gateway":"10.1.0.1"},
                {"interface":1,"address":"10.2.0.5/16","gateway":"10.2.0.1"},
                {"interface":1,"address":"fd00::5/64","gateway":"fd00::1"}],
         "routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1","mtu":1300,"advmss":1200,"priority":5,"table":100,"scope":0},
                   {"dst":"::/0"}],
         "dns":{"nameservers":["10.1.0.1"],"domain":"example.org","search":["a.org"],"options":["ndots:2"]}}
        """;

    @Test
    void decodesAndReencodes110Exactly() {
        Map<String, Object> in = Json.parseObject(V110);
        assertEquals(Json.write(in), Json.write(Result.fromJson(in)));
    }

    @Test
    void downTo040AddsVersionAndDrops11Fields() {
        Map<String, Object> out = Result.convert(Json.parseObject(V110), "0.4.0");
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"0.4.0",
             "interfaces":[{"name":"cni0","mac":"aa:bb:cc:dd:ee:01"},{"name":"eth0","mac":"aa:bb:cc:dd:ee:02","sandbox":"/var/run/netns/c1"}],
             "ips":[{"version":"4","interface":1,"address":"10.1.0.5/16","gateway":"10.1.0.1"},
                    {"version":"4","interface":1,"address":"10.2.0.5/16","gateway":"10.2.0.1"},
                    {"version":"6","interface":1,"address":"fd00::5/64","gateway":"fd00::1"}],
             "routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1"},{"dst":"::/0"}],
             "dns":{"nameservers":["10.1.0.1"],"domain":"example.org","search":["a.org"],"options":["ndots:2"]}}
            """)), Json.write(out));
    }

    @Test
    void downTo020KeepsFirstAddressOfEachFamilyWithItsRoutes() {
        Map<String, Object> out = Result.convert(Json.parseObject(V110), "0.2.0");
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"0.2.0",
             "ip4":{"ip":"10.1.0.5/16","gateway":"10.1.0.1","routes":[{"dst":"0.0.0.0/0","gw":"10.1.0.1"}]},
             "ip6":{"ip":"fd00::5/64","gateway":"fd00::1","routes":[{"dst":"::/0"}]},
             "dns":{"nameservers":["10.1.0.1"],"domain":"example.org","search":["a.org"],"options":["ndots:2"]}}
            """)), Json.write(out));
    }

    @Test
    void upFrom020GainsIpsWithVersionAndNoInterface() {
        Map<String, Object> in = Json.parseObject("""
            {"cniVersion":"0.2.0","ip4":{"ip":"10.1.0.5/16","gateway":"10.1.0.1","routes":[{"dst":"10.9.0.0/16"}]},"dns":{}}
            """);
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"0.3.1","ips":[{"version":"4","address":"10.1.0.5/16","gateway":"10.1.0.1"}],
             "routes":[{"dst":"10.9.0.0/16"}],"dns":{}}
            """)), Json.write(Result.convert(in, "0.3.1")));
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"1.0.0","ips":[{"address":"10.1.0.5/16","gateway":"10.1.0.1"}],"routes":[{"dst":"10.9.0.0/16"}],"dns":{}}
            """)), Json.write(Result.convert(in, "1.0.0")));
    }

    static Stream<Arguments> versionPairs() {
        List<Arguments> out = new ArrayList<>();
        for (CniVersion a : CniVersion.ALL) for (CniVersion b : CniVersion.ALL) out.add(Arguments.of(a.toString(), b.toString()));
        return out.stream();
    }

    /** Every pair: converting a→b is the same as a→1.1.0→b, and b's output re-decodes in b. */
    @ParameterizedTest
    @MethodSource("versionPairs")
    void convertsBetweenEveryPair(String from, String to) {
        Map<String, Object> src = Result.convert(Json.parseObject(V110), from);
        Map<String, Object> direct = Result.convert(src, to);
        assertEquals(to, direct.get("cniVersion"));
        assertEquals(Json.write(direct), Json.write(Result.convert(Result.convert(src, "1.1.0"), to)));
        assertEquals(Json.write(direct), Json.write(Result.fromJson(direct).toJson()));
        boolean legacy = CniVersion.parse(to).hasLegacyResult();
        assertEquals(legacy, direct.containsKey("ip4"));
        assertEquals(!legacy, direct.containsKey("ips"));
    }

    @Test
    void rejectsUnknownVersionAndBadShapes() {
        CniException e = assertThrows(CniException.class, () -> Result.fromJson(Json.parseObject("{\"cniVersion\":\"0.9.0\"}")));
        assertEquals(ErrorCode.INCOMPATIBLE_VERSION.code(), e.code());
        e = assertThrows(CniException.class, () -> Result.fromJson(Json.parseObject("{\"cniVersion\":\"1.0.0\",\"ips\":[{\"gateway\":\"1.2.3.4\"}]}")));
        assertTrue(e.getMessage().contains("result.ips[0].address"), e.getMessage());
        e = assertThrows(CniException.class, () -> Result.convert(Json.parseObject(V110), "2.0.0"));
        assertEquals(1, e.code());
    }

    @Test
    void addressesAreParsedOnceAndPrintedAsGoPrintsThem() {
        Result r = Result.fromJson(Json.parseObject("""
            {"cniVersion":"1.0.0","ips":[{"address":"FD00::0005/64","gateway":""},{"address":"10.1.0.5/16","gateway":"10.1.0.1"}],
             "routes":[{"dst":"10.9.0.7/16","gw":"::ffff:10.1.0.1"}]}"""));
        assertEquals(new Result.IpConfig(Cidr.parse("fd00::5/64"), null, null), r.ips().get(0));
        assertEquals(IpAddr.parse("10.1.0.5"), r.ips().get(1).ip());
        assertTrue(r.ips().get(0).isIpv6());
        // Host bits stay in a destination, as in Go's types.Route; "" is no gateway, as Go's nil IP.
        assertEquals(new Result.Route(Cidr.parse("10.9.0.7/16"), IpAddr.parse("10.1.0.1")), r.routes().get(0));
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"1.0.0","ips":[{"address":"fd00::5/64"},{"address":"10.1.0.5/16","gateway":"10.1.0.1"}],
             "routes":[{"dst":"10.9.0.7/16","gw":"10.1.0.1"}],"dns":{}}""")), Json.write(r));
        CniException e = assertThrows(CniException.class, () -> Result.fromJson(Json.parseObject(
                "{\"cniVersion\":\"1.0.0\",\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.1.0\"}]}")));
        assertEquals(ErrorCode.DECODING_FAILURE.code(), e.code());
        assertTrue(e.getMessage().contains("result.routes[0].gw"), e.getMessage());
    }
}
