package io.jcni.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** libcni's name rules (pkg/utils), plus jcni's printable-ASCII interface names. */
class NamesTest {

    @ParameterizedTest
    @ValueSource(strings = {".jcni-index", "-x", "a\nb", "a\n", "r\u00e9seau", "a/b", "..", "_a", ""})
    void networkNamesTheReferenceRefusesAreCode7(String name) {
        assertEquals(7, assertThrows(CniException.class, () -> Names.checkNetworkName(name)).code());
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "net-1.x_y", "0", "A.-_"})
    void networkNamesTheReferenceAcceptsPass(String name) {
        Names.checkNetworkName(name);
        Names.checkNetworkName(name.repeat(200));
        Names.checkContainerId(name.repeat(1000));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "..", "a/b", "a:b", "a b", "a\tb", "sixteen-bytes-xx", "\u00e9th0", "a\u0000b", "a\u007fb", "eth%d", "%d", "br%s", "a%"})
    void badInterfaceNamesAreCode4FromTheEnvironmentAnd7FromAConfig(String name) {
        assertEquals(4, assertThrows(CniException.class, () -> Names.checkInterfaceName(name)).code());
        assertEquals(7, assertThrows(CniException.class, () -> Names.checkConfigInterfaceName("bridge", name)).code());
    }

    @Test
    void fifteenPrintableBytesAreAnInterfaceName() {
        Names.checkInterfaceName("fifteen-bytes-x");
        Names.checkInterfaceName("br*");
        Names.checkInterfaceName("a\"b");
    }
}
