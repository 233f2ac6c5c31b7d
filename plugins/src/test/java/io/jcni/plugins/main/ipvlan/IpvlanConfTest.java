package io.jcni.plugins.main.ipvlan;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.linux.IpvlanMode;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ipvlan config and the choice of master, without a kernel. */
class IpvlanConfTest {

    private static Result prev(String interfaces) {
        return Result.fromJson(Json.parseObject("""
            {"cniVersion":"1.0.0","interfaces":%s,"ips":[{"address":"10.1.0.5/24","interface":0}]}""".formatted(interfaces)));
    }

    @Test
    void keysAndDefaults() {
        Ipvlan.Conf c = Ipvlan.Conf.load(Json.parseObject("{\"name\":\"n\"}"));
        assertEquals("", c.master());
        assertEquals(IpvlanMode.L2, c.mode());
        assertNull(c.ipamType());
        c = Ipvlan.Conf.load(Json.parseObject("{\"master\":\"bond0\",\"mode\":\"l3s\",\"mtu\":9000,\"linkInContainer\":true,\"ipam\":{\"type\":\"static\"}}"));
        assertEquals(List.of("bond0", "l3s", 9000, true, "static"), List.of(c.master(), c.mode().configName(), c.mtu(), c.linkInContainer(), c.ipamType()));
        CniException e = assertThrows(CniException.class, () -> Ipvlan.Conf.load(Json.parseObject("{\"mode\":\"l4\"}")));
        assertEquals("unknown ipvlan mode: \"l4\"", e.msg());
        assertEquals(7, e.code());
    }

    @Test
    void chainedWithoutMasterTheMasterIsPrevResultsSingleInterface() {
        Ipvlan.Conf c = Ipvlan.Conf.load(Json.parseObject("{\"name\":\"n\"}"));
        assertEquals("net1", Ipvlan.masterName(c, prev("[{\"name\":\"net1\"}]"), null));
        CniException e = assertThrows(CniException.class,
                () -> Ipvlan.masterName(c, prev("[{\"name\":\"a\"},{\"name\":\"b\"}]"), null));
        assertEquals("chained master failure. PrevResult lacks a single named interface", e.msg());
        Ipvlan.Conf named = Ipvlan.Conf.load(Json.parseObject("{\"master\":\"eth9\"}"));
        assertEquals("eth9", Ipvlan.masterName(named, prev("[{\"name\":\"a\"},{\"name\":\"b\"}]"), null));
    }
}
