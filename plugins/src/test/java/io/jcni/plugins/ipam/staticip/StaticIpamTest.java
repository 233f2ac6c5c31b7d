package io.jcni.plugins.ipam.staticip;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.testutil.PluginCall;
import io.jcni.types.Json;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StaticIpamTest {

    private static String conf(String version, String ipamBody, String extra) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"net\",\"type\":\"bridge\"" + extra
                + ",\"ipam\":{\"type\":\"static\"" + ipamBody + "}}";
    }

    private static final String ADDRS = ",\"addresses\":[{\"address\":\"10.10.0.1/24\",\"gateway\":\"10.10.0.254\"},{\"address\":\"3ffe:ffff:0:01ff::1/64\",\"gateway\":\"3ffe:ffff:0::1\"}]"
            + ",\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.0.0/16\",\"gw\":\"10.10.5.1\"}]"
            + ",\"dns\":{\"nameservers\":[\"8.8.8.8\"],\"domain\":\"example.com\",\"search\":[\"example.com\"]}";

    @Test
    void addReturnsConfiguredAddressesRoutesAndDns() {
        Map<String, Object> r = new PluginCall("static").ok("ADD", conf("1.0.0", ADDRS, ""));
        assertEquals(Json.write(Json.parse("""
            {"cniVersion":"1.0.0",
             "ips":[{"address":"10.10.0.1/24","gateway":"10.10.0.254"},{"address":"3ffe:ffff:0:1ff::1/64","gateway":"3ffe:ffff::1"}],
             "routes":[{"dst":"0.0.0.0/0"},{"dst":"192.168.0.0/16","gw":"10.10.5.1"}],
             "dns":{"nameservers":["8.8.8.8"],"domain":"example.com","search":["example.com"]}}
            """)), Json.write(r));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void everyVersionAnswersInKind(String v) {
        Map<String, Object> r = new PluginCall("static").ok("ADD", conf(v, ADDRS, ""));
        assertEquals(v, r.get("cniVersion"));
        assertEquals(2, ((java.util.List<?>) r.get("ips")).size());
    }

    @Test
    void legacyVersionsRefuseTwoAddressesOfAFamily() {
        String two = ",\"addresses\":[{\"address\":\"10.10.0.1/24\"},{\"address\":\"10.10.1.1/24\"}]";
        Map<String, Object> e = new PluginCall("static").fails("ADD", conf("0.2.0", two, ""));
        assertEquals("CNI version 0.2.0 does not support more than 1 address per family", e.get("msg"));
        Map<String, Object> ok = new PluginCall("static").ok("ADD", conf("0.2.0", ADDRS, ""));
        assertEquals("10.10.0.1/24", Json.asObject(ok.get("ip4")).get("ip"));
    }

    @Test
    void cniArgsAddAddressesAndGateways() {
        Map<String, Object> r = new PluginCall("static").env("CNI_ARGS", "IP=10.9.0.5/16,fd00::5/64;GATEWAY=10.9.0.1")
                .ok("ADD", conf("1.0.0", "", ""));
        assertEquals("[{\"address\":\"10.9.0.5/16\",\"gateway\":\"10.9.0.1\"},{\"address\":\"fd00::5/64\"}]", Json.write(r.get("ips")));
        Map<String, Object> e = new PluginCall("static").env("CNI_ARGS", "FOO=1").fails("ADD", conf("1.0.0", "", ""));
        assertEquals(4L, e.get("code"));
    }

    @Test
    void runtimeConfigIpsReplaceEverything() {
        String extra = ",\"runtimeConfig\":{\"ips\":[\"10.20.0.7/24\"]},\"args\":{\"cni\":{\"ips\":[\"10.30.0.7/24\"]}}";
        Map<String, Object> r = new PluginCall("static").ok("ADD", conf("1.0.0", ADDRS, extra));
        assertEquals("[{\"address\":\"10.20.0.7/24\"}]", Json.write(r.get("ips")));
    }

    @Test
    void badConfigIsReported() {
        assertEquals("invalid CIDR 10.0.0.300/24", new PluginCall("static")
                .fails("ADD", conf("1.0.0", ",\"addresses\":[{\"address\":\"10.0.0.300/24\"}]", "")).get("msg"));
        assertEquals("IPAM config missing 'ipam' key", new PluginCall("static")
                .fails("ADD", "{\"cniVersion\":\"1.0.0\",\"name\":\"n\"}").get("msg"));
    }

    @Test
    void checkComparesWithPrevResult() {
        String good = ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.10.0.1/24\",\"gateway\":\"10.10.0.254\"}]}";
        new PluginCall("static").ok("CHECK", conf("1.0.0", ADDRS, good));
        String bad = ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.10.0.1/24\",\"gateway\":\"10.10.0.9\"}]}";
        new PluginCall("static").fails("CHECK", conf("1.0.0", ADDRS, bad));
        new PluginCall("static").ok("DEL", conf("1.0.0", ADDRS, ""));
    }
}
