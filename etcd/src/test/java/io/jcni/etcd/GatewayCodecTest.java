package io.jcni.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Json;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GatewayCodecTest {
    @Test
    void prefixEndAndBase64() {
        assertEquals("/coreos.com/network/subnets0", GatewayCodec.prefixEnd("/coreos.com/network/subnets/"));
        assertEquals("L2E=", GatewayCodec.b64("/a"));
        assertEquals("/a", GatewayCodec.unb64("L2E="));
        assertEquals(0, GatewayCodec.num(null), "proto3 leaves zero out");
        assertEquals(7587868419453475000L, GatewayCodec.num("7587868419453475000"));
    }

    @Test
    void watchStreamSplitsConcatenatedObjects() throws Exception {
        String s = "{\"result\":{\"header\":{\"revision\":\"5\"},\"created\":true}}\n"
                + "{\"result\":{\"header\":{\"revision\":\"6\"},\"events\":[{\"kv\":{\"key\":\"L2E=\",\"value\":\"e30=\",\"mod_revision\":\"6\"}},"
                + "{\"type\":\"DELETE\",\"kv\":{\"key\":\"L2I=\",\"mod_revision\":\"6\"}}]}}{\"x\":\"}{\\\"\"}";
        JsonObjectStream st = new JsonObjectStream(new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8)));
        assertTrue(st.next().contains("created"));
        var msg = Json.parseObject(st.next());
        var evs = Json.asList(Json.asObject(msg.get("result")).get("events"));
        WatchEvent put = WatchEvent.fromGateway(Json.asObject(evs.get(0)), 6);
        WatchEvent del = WatchEvent.fromGateway(Json.asObject(evs.get(1)), 6);
        assertFalse(put.deleted());
        assertEquals("/a", put.kv().key());
        assertEquals("{}", put.kv().value());
        assertTrue(del.deleted());
        assertEquals("/b", del.kv().key());
        assertEquals("{\"x\":\"}{\\\"\"}", st.next(), "braces and quotes inside strings");
        assertNull(st.next());
    }
}
