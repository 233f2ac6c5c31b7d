package io.jcni.plugins.main.bridge;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.Cidr;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

class BridgeConfTest {

    static BridgeConf load(String json) {
        return BridgeConf.load(Json.parseObject(json), CniArgs.EMPTY);
    }

    @Test
    void defaultsAreUpstreams() {
        BridgeConf c = load("{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\"}");
        assertEquals("cni0", c.bridge());
        assertFalse(c.isGateway());
        assertTrue(c.preserveDefaultVlan());
        assertEquals(0, c.mtu());
        assertNull(c.ipamType());
        assertNull(c.mac());
        assertNull(c.dns());
    }

    /** Go refuses these for an int field (or as JSON), so jcni does too, with code 6. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"01500", "1500.0", "1.5e3", "\"1500\"", "-01"})
    void mtuMustBeAnIntegralLiteral(String mtu) {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\",\"mtu\":" + mtu + "}";
        assertEquals(6L, new io.jcni.plugins.testutil.PluginCall("bridge").fails("ADD", conf).get("code"), mtu);
    }

    /** DEL does not validate the mac capability or CNI_ARGS MAC: they must not keep an attachment alive. */
    @Test
    void delIgnoresTheMacCapability() {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"n\",\"type\":\"bridge\",\"runtimeConfig\":{\"mac\":\"not-a-mac\"}}";
        io.jcni.plugins.testutil.PluginCall call = new io.jcni.plugins.testutil.PluginCall("bridge").env("CNI_ARGS", "MAC=zz");
        assertEquals(7L, call.fails("ADD", conf).get("code"), "ADD validates the MAC");
        call.env("CNI_NETNS", "").ok("DEL", conf);
    }

    @Test
    void defaultGatewayImpliesGateway() {
        assertTrue(load("{\"isDefaultGateway\":true}").isGateway());
    }

    @Test
    void macPrecedenceIsEnvThenArgsThenRuntimeConfig() {
        String conf = "{\"args\":{\"cni\":{\"mac\":\"02:00:00:00:00:02\"}},\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}}";
        assertEquals("02:00:00:00:00:03", BridgeConf.load(Json.parseObject(conf), CniArgs.parse("MAC=02:00:00:00:00:01")).mac().toString());
        assertEquals("02:00:00:00:00:01", BridgeConf.load(Json.parseObject("{}"), CniArgs.parse("MAC=02:00:00:00:00:01")).mac().toString());
        assertThrows(CniException.class, () -> BridgeConf.load(Json.parseObject("{}"), CniArgs.parse("FOO=1")));
        BridgeConf.load(Json.parseObject("{}"), CniArgs.parse("IgnoreUnknown=1;FOO=1"));
        assertThrows(CniException.class, () -> load("{\"runtimeConfig\":{\"mac\":\"nope\"}}"));
    }

    @Test
    void vlanTrunkCollectsSortedUniqueIds() {
        BridgeConf c = load("{\"vlanTrunk\":[{\"id\":42},{\"minID\":10,\"maxID\":12},{\"id\":11}]}");
        assertEquals(List.of(10, 11, 12, 42), c.vlans());
        assertEquals("incorrect trunk id parameter", assertThrows(CniException.class, () -> load("{\"vlanTrunk\":[{\"id\":0}]}")).msg());
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlanTrunk\":[{\"maxID\":3}]}")).msg().contains("minID is missing"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlanTrunk\":[{\"minID\":5,\"maxID\":3}]}")).msg().contains("greater"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlan\":3,\"vlanTrunk\":[{\"id\":4}]}")).msg().contains("at the same time"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlan\":-1}")).msg().contains("invalid VLAN ID -1"));
    }

    @Test
    void unsupportedFeaturesAreRefusedByName() {
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlan\":7}").rejectUnsupported()).msg().startsWith("vlan "));
        assertTrue(assertThrows(CniException.class, () -> load("{\"vlanTrunk\":[{\"id\":7}]}").rejectUnsupported()).msg().startsWith("vlanTrunk "));
        BridgeConf spoof = load("{\"macspoofchk\":true}");
        spoof.rejectUnsupported(); // supported (nftables, see MacSpoofCheck)
        assertTrue(spoof.macSpoofChk());
        assertTrue(assertThrows(CniException.class, () -> load("{\"macspoofchk\":\"yes\"}")).msg().contains("macspoofchk"));
        load("{\"ipMasq\":true,\"vlan\":0}").rejectUnsupported();
    }

    @Test
    void badTypesNameTheKey() {
        assertTrue(assertThrows(CniException.class, () -> load("{\"mtu\":\"1500\"}")).msg().contains("'mtu'"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"hairpinMode\":3}")).msg().contains("'hairpinMode'"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"bridge\":\"much-too-long-bridge-name\"}")).msg().contains("'bridge'"));
        assertTrue(assertThrows(CniException.class, () -> load("{\"disableContainerInterface\":true,\"ipam\":{\"type\":\"static\"}}"))
                .msg().contains("disableContainerInterface"));
    }

    @Test
    void gatewaysAndDefaultRoutesPerFamily() {
        BridgeConf n = load("{\"isDefaultGateway\":true}");
        Result ipam = new Result("1.0.0", List.of(), List.of(
                new Result.IpConfig(Cidr.parse("10.1.2.5/16"), null, null),
                new Result.IpConfig(Cidr.parse("10.9.0.5/24"), IpAddr.parse("10.9.0.254"), null),
                new Result.IpConfig(Cidr.parse("fd00::5/64"), null, null)),
                List.of(new Result.Route(Cidr.parse("::/0"), IpAddr.parse("fd00::99"))), null);
        Bridge.Gateways g = Bridge.calcGateways(ipam, n);
        Result r = g.result();
        assertEquals(List.of(new Result.IpConfig(Cidr.parse("10.1.2.5/16"), IpAddr.parse("10.1.0.1"), 2), new Result.IpConfig(Cidr.parse("10.9.0.5/24"), IpAddr.parse("10.9.0.254"), 2),
                new Result.IpConfig(Cidr.parse("fd00::5/64"), IpAddr.parse("fd00::1"), 2)), r.ips());
        // One IPv4 default route via the first gateway; IPAM's IPv6 default route is kept as is.
        assertEquals(List.of(new Result.Route(Cidr.parse("::/0"), IpAddr.parse("fd00::99")), new Result.Route(Cidr.parse("0.0.0.0/0"), IpAddr.parse("10.1.0.1"))), r.routes());
        assertEquals(List.of(Cidr.parse("10.1.0.1/16"), Cidr.parse("10.9.0.254/24")), g.v4());
        assertEquals(List.of(Cidr.parse("fd00::1/64")), g.v6());

        Bridge.Gateways plain = Bridge.calcGateways(ipam, load("{}"));
        assertNull(plain.result().ips().get(0).gateway());
        assertTrue(plain.v4().isEmpty());
        assertEquals(1, plain.result().routes().size());
    }

    @Test
    void configDnsOnlyCountsWhenSet() {
        assertNull(load("{\"dns\":{}}").dns());
        assertNull(load("{\"dns\":{\"domain\":\"\"}}").dns());
        assertEquals(List.of(), load("{\"dns\":{\"nameservers\":[]}}").dns().nameservers());
        assertEquals("x", load("{\"dns\":{\"domain\":\"x\"}}").dns().domain());
    }
}
