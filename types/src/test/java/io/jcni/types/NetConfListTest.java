package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NetConfListTest {

    @Test
    void parsesListKeepingUnknownPluginKeys() {
        NetConfList l = NetConfList.parse("""
            {"cniVersion":"1.0.0","name":"net1","disableCheck":"true","plugins":[
              {"type":"bridge","bridge":"cni0","ipam":{"type":"host-local","subnet":"10.1.0.0/16"},"custom":{"x":[1,2]}},
              {"type":"portmap","capabilities":{"portMappings":true}}]}
            """, "/etc/cni/net.d/10-net1.conflist");
        assertEquals("net1", l.name());
        assertEquals("1.0.0", l.cniVersion());
        assertTrue(l.disableCheck());
        assertFalse(l.disableGC());
        assertEquals(2, l.plugins().size());
        assertEquals("{\"x\":[1,2]}", Json.write(l.plugins().get(0).raw().get("custom")));
        assertTrue(l.plugins().get(1).hasCapability("portMappings"));
        assertFalse(l.plugins().get(0).hasCapability("portMappings"));
    }

    @Test
    void cniVersionsPicksTheHighestSupported() {
        NetConfList l = NetConfList.parse("""
            {"cniVersion":"0.4.0","cniVersions":["0.3.1","1.0.0","9.9.9"],"name":"n","plugins":[{"type":"loopback"}]}
            """, "f");
        assertEquals("1.0.0", l.cniVersion());
    }

    @Test
    void legacyConfBecomesAOnePluginList() {
        NetConfList l = NetConfList.parseSingle("""
            {"cniVersion":"0.3.1","name":"old","type":"bridge","bridge":"br9"}
            """, "/x/10-old.conf");
        assertEquals("old", l.name());
        assertEquals("0.3.1", l.cniVersion());
        assertEquals("bridge", l.plugins().get(0).type());
        assertEquals("br9", l.plugins().get(0).raw().get("bridge"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
        {"cniVersion":"1.0.0","plugins":[{"type":"a"}]}                              | 7 | f.conflist.name is required
        {"cniVersion":"1.0.0","name":"-bad","plugins":[{"type":"a"}]}                | 7 | f.conflist.name
        {"cniVersion":"1.0.0","name":"n","plugins":[{"x":1}]}                        | 7 | f.conflist.plugins[0].type
        {"cniVersion":"1.0.0","name":"n","plugins":[{"type":"../evil"}]}             | 7 | f.conflist.plugins[0].type
        {"cniVersion":"0.5.0","name":"n","plugins":[{"type":"a"}]}                   | 1 | f.conflist.cniVersion
        {"cniVersion":"x.y","name":"n","plugins":[{"type":"a"}]}                     | 1 | f.conflist.cniVersion
        {"cniVersion":"1.0.0","name":"n","plugins":[]}                               | 7 | f.conflist.plugins
        {"cniVersion":"1.0.0","name":"n","plugins":{}}                               | 6 | f.conflist.plugins
        {"cniVersion":"1.0.0","name":"n","disableGC":"maybe","plugins":[{"type":"a"}]} | 6 | f.conflist.disableGC
        {"cniVersion":"1.0.0","name":"n","loadOnlyInlinedPlugins":true}              | 7 | loadOnlyInlinedPlugins
        {"cniVersion":"1.0.0","name":7,"plugins":[{"type":"a"}]}                     | 6 | f.conflist.name
        {"cniVersion":"1.0.0" "name":"n"}                                            | 6 | f.conflist: expected
        """)
    void badConfigsNameTheFileAndField(String json, int code, String mentions) {
        CniException e = assertThrows(CniException.class, () -> NetConfList.parse(json, "f.conflist"));
        assertEquals(code, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(mentions), e.getMessage());
    }

    @Test
    void cniArgsParseAndUnknownKeys() {
        CniArgs a = CniArgs.parse("IgnoreUnknown=1;K8S_POD_NAME=web;IP=10.1.0.9");
        assertEquals("web", a.get("K8S_POD_NAME"));
        assertTrue(a.ignoreUnknown());
        a.requireKnown(java.util.Set.of("IP"));
        CniArgs strict = CniArgs.parse("FOO=1");
        CniException e = assertThrows(CniException.class, () -> strict.requireKnown(java.util.Set.of("IP")));
        assertTrue(e.getMessage().contains("FOO"));
        assertThrows(CniException.class, () -> CniArgs.parse("novalue"));
    }

    @Test
    void versionsCompareNumerically() {
        assertTrue(CniVersion.parse("0.10.0").compareTo(CniVersion.parse("0.4.0")) > 0);
        assertEquals(CniVersion.V0_1_0, CniVersion.parse(""));
        assertThrows(CniException.class, () -> CniVersion.parseSupported("0.3.2"));
        assertTrue(CniCommand.GC.allowedIn(CniVersion.V1_1_0));
        assertFalse(CniCommand.CHECK.allowedIn(CniVersion.V0_3_1));
    }

    @Test
    void errorJsonRoundTrips() {
        CniException e = new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "bad", "very bad");
        assertEquals("{\"cniVersion\":\"1.0.0\",\"code\":7,\"msg\":\"bad\",\"details\":\"very bad\"}", Json.write(e.toJson("1.0.0")));
        CniException back = CniException.fromJson(e.toJson("1.0.0"));
        assertEquals(7, back.code());
        assertEquals("very bad", back.details());
    }
}
