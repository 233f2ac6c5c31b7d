package io.jcni.plugins.ipam.dhcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.CniArgs;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DhcpConfTest {
    static DhcpConf parse(String ipam, String args) {
        return DhcpConf.parse(Json.parseObject(ipam), CniArgs.parse(args));
    }

    @Test
    void defaults() {
        DhcpConf c = parse("{\"type\":\"dhcp\"}", "");
        assertEquals(DhcpConf.DEFAULT_SOCKET, c.socketPath());
        assertEquals(List.of(1, 3, 6, 15, 121), c.requested());
        assertEquals(Map.of(), c.provided());
        assertEquals(10_000, c.timeoutMillis());
    }

    @Test
    void requestAddsToTheDefaultsUnlessSkipDefault() {
        assertEquals(List.of(12, 1, 3, 6, 15, 121), parse("{\"request\":[{\"option\":\"host-name\"}]}", "").requested());
        assertEquals(List.of(3, 42), parse("{\"request\":[{\"option\":\"routers\",\"skipDefault\":true},{\"option\":\"42\"}]}", "")
                .requested());
    }

    @Test
    void provideTakesValuesAndCniArgs() {
        DhcpConf c = parse("{\"provide\":[{\"option\":\"host-name\",\"value\":\"fixed\"},"
                + "{\"option\":\"user-class\",\"fromArg\":\"K8S_POD_NAME\"},{\"option\":\"60\",\"value\":\"v\",\"fromArg\":\"MISSING\"}]}",
                "K8S_POD_NAME=web-0;IgnoreUnknown=1");
        assertArrayEquals("fixed".getBytes(StandardCharsets.UTF_8), c.provided().get(12));
        assertArrayEquals("web-0".getBytes(StandardCharsets.UTF_8), c.provided().get(77));
        assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), c.provided().get(60), "an absent CNI_ARG keeps the value");
    }

    @Test
    void badOptionsAndValuesAreConfigErrors() {
        CniException e = assertThrows(CniException.class, () -> parse("{\"request\":[{\"option\":\"no-such\"}]}", ""));
        assertEquals(7, e.code());
        assertTrue(e.getMessage().contains("no-such"));
        assertThrows(CniException.class, () -> parse("{\"request\":[{\"option\":\"256\"}]}", ""));
        assertThrows(CniException.class, () -> parse("{\"provide\":[{\"option\":\"12\",\"value\":\"" + "x".repeat(256) + "\"}]}", ""));
    }

    @Test
    void timeoutIsAGoDurationOrSeconds() {
        assertEquals(2_000, parse("{\"timeout\":\"2s\"}", "").timeoutMillis());
        assertEquals(90_500, parse("{\"timeout\":\"1m30s500ms\"}", "").timeoutMillis());
        assertEquals(3_000, parse("{\"timeout\":3}", "").timeoutMillis());
        assertThrows(CniException.class, () -> parse("{\"timeout\":\"soon\"}", ""));
        assertThrows(CniException.class, () -> parse("{\"timeout\":\"0s\"}", ""));
        assertThrows(CniException.class, () -> parse("{\"timeout\":\"1h\"}", ""), "bounded: at most 5 minutes");
    }

    @Test
    void resultFromTheServicesLease() {
        Result r = Dhcp.toResult(Json.parseObject("{\"address\":\"10.0.0.5/24\",\"gateway\":\"10.0.0.1\","
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\",\"gw\":\"10.0.0.1\"},{\"dst\":\"10.9.0.0/16\"}],"
                + "\"nameservers\":[\"10.0.0.53\"],\"domain\":\"x.test\"}"));
        assertEquals("10.0.0.5/24", r.ips().getFirst().address().toString());
        assertEquals("10.0.0.1", r.ips().getFirst().gateway().toString());
        assertEquals(2, r.routes().size());
        assertEquals(null, r.routes().get(1).gw());
        assertEquals(List.of("10.0.0.53"), r.dns().nameservers());
        assertEquals("x.test", r.dns().domain());
    }
}
