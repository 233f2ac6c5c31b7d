package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The store lock is the flock(2) the Go plugin takes, so util-linux flock(1) sees it. */
class StoreLockTest {
    @TempDir Path dir;

    private int flockNonBlocking(Path file) throws Exception {
        Process p = new ProcessBuilder("flock", "-n", file.toString(), "true").redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return p.exitValue();
    }

    @Test
    void excludesOtherFlockHoldersWhileHeld() throws Exception {
        Path lockFile = dir.resolve("lock");
        StoreLock lock = StoreLock.open(lockFile);
        lock.lock();
        try {
            assertEquals(1, flockNonBlocking(lockFile), "flock(1) must not get the lock jcni holds");
        } finally {
            lock.unlock();
        }
        assertEquals(0, flockNonBlocking(lockFile), "released");
        lock.close();
    }
}
