package io.jcni.linux;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The Java errno table (used without the native library) agrees with this machine's libc. */
class ErrnoTableTest {

    @Test
    void javaTableMatchesLibc() {
        for (int n = 1; n <= 133; n++) {
            String libcName = Native.errnoName(n);
            if (libcName == null) {
                assertEquals("E" + n, Errno.name(n), "unused errno " + n);
                continue;
            }
            assertEquals(libcName, Errno.name(n), "name of errno " + n);
            assertEquals(Native.strerror(n), Errno.message(n), "message of errno " + n);
        }
    }
}
