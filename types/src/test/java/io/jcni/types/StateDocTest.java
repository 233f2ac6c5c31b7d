package io.jcni.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class StateDocTest {
    private static final String FILE = "/var/lib/cni/jcni/nft/4026531840/att/portmap/net/c1@eth0";

    @Test
    void readsWhatJcniWrote() {
        StateDoc d = StateDoc.parse(FILE, "{\"scope\":\"portmap\",\"mtu\":1500,\"up\":true,\"elements\":[[\"s\",\"k\"],[\"m\",\"k\",\"v\"]]}");
        assertEquals("portmap", d.string("scope"));
        assertEquals(1500, d.integer("mtu", 0, 65535));
        assertEquals(true, d.bool("up"));
        assertEquals(List.of(List.of("s", "k"), List.of("m", "k", "v")), d.stringLists("elements"));
        assertEquals(List.of(), d.strings("absent"));
        assertEquals(List.of(1L, 3L), StateDoc.parse(FILE, "{\"r\":[1,3]}").integers("r", 0, 255));
        assertEquals(null, d.optString("absent"));
    }

    /** Every damaged shape is one exception whose message names the file and, below the top level, the field. */
    @Test
    void everyDamagedShapeNamesTheFile() {
        assertDamaged("empty", () -> StateDoc.parse(FILE, ""));
        assertDamaged("empty", () -> StateDoc.parse(FILE, " \n"));
        assertDamaged("not JSON", () -> StateDoc.parse(FILE, "{\"scope\":\"port"));            // truncated
        assertDamaged("not JSON", () -> StateDoc.parse(FILE, "scope=portmap"));                // not JSON at all
        assertDamaged("not JSON", () -> StateDoc.parse(FILE, "{\"a\":1}\u0000\u0000\u0000"));  // NUL tail of a torn write
        assertDamaged("not a JSON object", () -> StateDoc.parse(FILE, "[\"portmap\"]"));
        assertDamaged("not a JSON object", () -> StateDoc.parse(FILE, "null"));
        StateDoc wrong = StateDoc.parse(FILE, "{\"scope\":7,\"mtu\":\"1500\",\"up\":\"yes\",\"elements\":{\"s\":\"k\"},\"ips\":[\"a\",1],"
                + "\"tuples\":[[\"s\",\"k\"],\"s k\"],\"big\":1e3}");
        assertDamaged("scope: expected a string", () -> wrong.string("scope"));
        assertDamaged("missing: missing", () -> wrong.string("missing"));
        assertDamaged("mtu: expected a whole number in [0, 65535]", () -> wrong.integer("mtu", 0, 65535));
        assertDamaged("big: expected a whole number", () -> wrong.integer("big", 0, Long.MAX_VALUE));
        assertDamaged("up: expected true or false", () -> wrong.bool("up"));
        assertDamaged("elements: expected a list", () -> wrong.stringLists("elements"));
        assertDamaged("ips[1]: expected a string", () -> wrong.strings("ips"));
        assertDamaged("tuples[1]: expected a list", () -> wrong.stringLists("tuples"));
        assertDamaged("ips[0]: expected a whole number in [0, 255]", () -> wrong.integers("ips", 0, 255));
        assertDamaged("r[1]: expected a whole number in [0, 255]", () -> StateDoc.parse(FILE, "{\"r\":[1,256]}").integers("r", 0, 255));
        assertDamaged("elements: expected an object", () -> StateDoc.parse(FILE, "{\"elements\":[]}").object("elements"));
        StateDoc nested = StateDoc.parse(FILE, "{\"ack\":{\"1\":5}}").object("ack");
        assertDamaged("ack.1: expected a string", () -> nested.string("1"));
    }

    /** The reads of the Docker driver's documents: CIDRs, addresses, lists of objects (their fields named by index), defaults. */
    @Test
    void readsNetworksAndPools() {
        StateDoc d = StateDoc.parse(FILE, "{\"subnets\":[{\"pool\":\"10.8.0.0/24\",\"gateway\":\"10.8.0.1/24\"},{\"pool\":\"10.8.1.0/99\"}],"
                + "\"allocated\":[\"10.8.0.1\",\"x\"],\"conflist\":{\"plugins\":[]},\"mtu\":null}");
        List<StateDoc> subnets = d.objects("subnets");
        assertEquals(Cidr.parse("10.8.0.0/24"), subnets.getFirst().cidr("pool"));
        assertEquals(Cidr.parse("10.8.0.1/24"), subnets.getFirst().optCidr("gateway"));
        assertEquals(null, subnets.get(1).optCidr("gateway"));
        assertDamaged("subnets[1].pool: not a CIDR: 10.8.1.0/99", () -> subnets.get(1).cidr("pool"));
        assertDamaged("allocated[1]: not an IP address: x", () -> d.addresses("allocated"));
        assertEquals(List.of(IpAddr.parse("10.8.0.1")), StateDoc.parse(FILE, "{\"a\":[\"10.8.0.1\"]}").addresses("a"));
        assertEquals(1500, d.integer("mtu", 68, 65535, 1500));
        assertEquals(true, d.bool("internal", true));
        assertEquals(List.of(), d.optObject("conflist").get("plugins"));
        assertEquals(null, d.optObject("absent"));
        assertDamaged("subnets: expected an object", () -> d.optObject("subnets"));
        assertDamaged("allocated[0]: expected an object", () -> d.objects("allocated"));
    }

    private static void assertDamaged(String problem, org.junit.jupiter.api.function.Executable read) {
        DamagedStateException e = assertThrows(DamagedStateException.class, read);
        assertEquals(true, e.getMessage().startsWith("damaged state file " + FILE + ": "), e.getMessage());
        assertEquals(true, e.getMessage().contains(problem), e.getMessage());
    }
}
