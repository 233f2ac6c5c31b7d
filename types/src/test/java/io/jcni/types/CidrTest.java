package io.jcni.types;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** Cidr's hand-written equals and hashCode keep a record's value semantics. */
class CidrTest {
    @Test
    void equalByAddressAndPrefix() {
        Cidr a = Cidr.parse("10.1.0.5/16");
        assertEquals(a, Cidr.parse("10.1.0.5/16"));
        assertEquals(a.hashCode(), Cidr.parse("10.1.0.5/16").hashCode());
        assertNotEquals(a, Cidr.parse("10.1.0.5/24"));
        assertNotEquals(a, Cidr.parse("10.1.0.6/16"));
        assertNotEquals(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0"));
        assertNotEquals(a, "10.1.0.5/16");
        assertNotEquals(a, null);
        assertEquals(Cidr.parse("fd00::1/64"), Cidr.parse("fd00:0::1/64"));
        assertEquals(Set.of(a, Cidr.parse("fd00::1/64")), Set.of(Cidr.parse("fd00::1/64"), Cidr.parse("10.1.0.5/16")));
    }
}
