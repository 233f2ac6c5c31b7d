package io.jcni.plugins.main.macvlan;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.MacvlanMode;
import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The macvlan config without a kernel: keys, defaults, the MAC's sources and their order. */
class MacvlanConfTest {

    private static MacvlanConf load(String json, String cniArgs) {
        return MacvlanConf.load(Json.parseObject(json), CniArgs.parse(cniArgs));
    }

    @Test
    void defaults() {
        MacvlanConf c = load("{\"name\":\"n\",\"type\":\"macvlan\"}", "");
        assertEquals("", c.master());
        assertEquals(MacvlanMode.BRIDGE, c.mode());
        assertEquals(0, c.mtu());
        assertNull(c.mac());
        assertFalse(c.linkInContainer());
        assertNull(c.ipamType());
        assertEquals(Result.Dns.EMPTY, c.dns());
    }

    @Test
    void keysAsUpstreamSpellsThem() {
        MacvlanConf c = load("""
            {"master":"eth1","mode":"passthru","mtu":1400,"linkInContainer":true,"bcqueuelen":64,
             "ipam":{"type":"static"},"dns":{"nameservers":["10.0.0.53"]}}""", "");
        assertEquals("eth1", c.master());
        assertEquals(MacvlanMode.PASSTHRU, c.mode());
        assertEquals(1400, c.mtu());
        assertTrue(c.linkInContainer());
        assertEquals(64, c.bcQueueLen());
        assertEquals("static", c.ipamType());
        assertEquals(List.of("10.0.0.53"), c.dns().nameservers());
    }

    @Test
    void theMacComesFromTheConfigThenCniArgsThenRuntimeConfig() {
        assertEquals("02:00:00:00:00:01", load("{\"mac\":\"02:00:00:00:00:01\"}", "").mac().toString());
        assertEquals("02:00:00:00:00:02", load("{\"mac\":\"02:00:00:00:00:01\"}", "IgnoreUnknown=1;MAC=02:00:00:00:00:02").mac().toString());
        assertEquals("02:00:00:00:00:03", load("{\"mac\":\"02:00:00:00:00:01\",\"runtimeConfig\":{\"mac\":\"02:00:00:00:00:03\"}}",
                "MAC=02:00:00:00:00:02").mac().toString());
    }

    @Test
    void badValuesAreConfigErrors() {
        CniException e = assertThrows(CniException.class, () -> load("{\"mode\":\"bridged\"}", ""));
        assertEquals("unknown macvlan mode: \"bridged\"", e.msg());
        assertEquals(7, e.code());
        assertEquals(7, assertThrows(CniException.class, () -> load("{\"mac\":\"02:00:00:00:00\"}", "")).code());
        // CNI_ARGS with a key the plugin does not know, without IgnoreUnknown, is refused (types.LoadArgs).
        assertThrows(CniException.class, () -> load("{}", "K8S_POD_NAME=web"));
        assertThrows(CniException.class, () -> load("{\"mtu\":\"1400\"}", ""));
    }
}
