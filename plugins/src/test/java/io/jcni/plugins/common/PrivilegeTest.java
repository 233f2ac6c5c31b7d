package io.jcni.plugins.common;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import org.junit.jupiter.api.Test;

class PrivilegeTest {
    @Test
    void readsCapNetAdminFromCapEff() {
        assertTrue(Privilege.hasNetAdmin("Name:\tx\nCapEff:\t000001ffffffffff\n"));
        assertFalse(Privilege.hasNetAdmin("Name:\tx\nCapEff:\t0000000000000000\n"));
        assertFalse(Privilege.hasNetAdmin("CapEff:\t0000000000000fff\n"), "bit 12 is CAP_NET_ADMIN");
        assertTrue(Privilege.hasNetAdmin("CapEff:\t0000000000001000\n"));
        assertTrue(Privilege.hasNetAdmin(""), "unknown: no claim");
    }

    @Test
    void onlyAPermissionErrorInTheCauseChainCounts() {
        CniException eperm = new CniException(ErrorCode.INTERNAL, "failed to create bridge", new ErrnoException(Errno.EPERM, "add link"));
        assertTrue(Privilege.causedByPermission(eperm));
        assertTrue(Privilege.causedByPermission(new RuntimeException(new ErrnoException(Errno.EACCES, "open"))));
        assertFalse(Privilege.causedByPermission(new CniException(ErrorCode.INTERNAL, "x", new ErrnoException(Errno.ENOENT, "open"))));
        assertFalse(Privilege.causedByPermission(new IllegalStateException("x")));
    }
}
