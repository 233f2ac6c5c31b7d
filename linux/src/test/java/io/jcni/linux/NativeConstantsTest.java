package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The constants Native.java uses come from the C library as compiled for this machine. */
class NativeConstantsTest {

    @Test
    void x86_64ValuesAreTheKnownOnes() {
        Assumptions.assumeTrue("amd64".equals(System.getProperty("os.arch")), "values checked here are x86-64's");
        assertEquals(0200000, Native.O_DIRECTORY);
        assertEquals(0100, Native.O_CREAT);
        assertEquals(0200, Native.O_EXCL);
        assertEquals(2, Native.O_RDWR);
        assertEquals(0x40000000, Native.CLONE_NEWNET);
        assertEquals(4096, Native.MS_BIND);
        assertEquals(1 << 20, Native.MS_SHARED);
        assertEquals(2, Native.LOCK_EX);
        assertEquals(16, Native.AF_NETLINK);
        assertEquals(270, Native.SOL_NETLINK);
    }

    @Test
    void anUnknownNameFailsLoudly() {
        ErrnoException e = assertThrows(ErrnoException.class, () -> Native.constant("O_NO_SUCH_FLAG"));
        assertEquals("ENOENT", Errno.name(e.errno()));
    }
}
