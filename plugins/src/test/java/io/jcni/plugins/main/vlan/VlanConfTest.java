package io.jcni.plugins.main.vlan;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.CniException;
import io.jcni.types.Json;
import org.junit.jupiter.api.Test;

/** The vlan config without a kernel: upstream's required keys and bounds. */
class VlanConfTest {

    private static Vlan.Conf load(String json) {
        return Vlan.Conf.load(Json.parseObject(json));
    }

    private static CniException fails(String json) {
        return assertThrows(CniException.class, () -> load(json));
    }

    @Test
    void keys() {
        Vlan.Conf c = load("{\"master\":\"eth0\",\"vlanId\":4094,\"mtu\":1400,\"linkInContainer\":true,\"ipam\":{\"type\":\"host-local\"}}");
        assertEquals("eth0", c.master());
        assertEquals(4094, c.vlanId());
        assertEquals(1400, c.mtu());
        assertTrue(c.linkInContainer());
        assertEquals("host-local", c.ipamType());
        assertEquals(0, load("{\"master\":\"eth0\",\"ipam\":{\"type\":\"static\"}}").vlanId(), "0 as upstream allows it");
    }

    @Test
    void requiredAndBounded() {
        assertEquals("\"master\" field is required. It specifies the host interface name to create the VLAN for",
                fails("{\"vlanId\":5,\"ipam\":{\"type\":\"static\"}}").msg());
        assertEquals("invalid VLAN ID 4095 (must be between 0 and 4095 inclusive)", fails("{\"master\":\"eth0\",\"vlanId\":4095,\"ipam\":{\"type\":\"static\"}}").msg());
        assertEquals("invalid VLAN ID -1 (must be between 0 and 4095 inclusive)", fails("{\"master\":\"eth0\",\"vlanId\":-1,\"ipam\":{\"type\":\"static\"}}").msg());
        assertEquals(7, fails("{\"master\":\"eth0\",\"vlanId\":5}").code(), "IPAM is required");
        assertEquals(6, fails("{\"master\":\"eth0\",\"vlanId\":\"5\",\"ipam\":{\"type\":\"static\"}}").code(), "a string is not an int");
    }
}
