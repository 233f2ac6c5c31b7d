package io.jcni.plugins.common.nft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.linux.Flock;
import io.jcni.plugins.common.nft.DeadNamespaceState.Liveness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which namespace state is garbage, and its removal, with the liveness given (no root, no namespaces). */
class DeadNamespaceStateTest {
    @TempDir
    Path base;

    @Test
    void decision() {
        assertTrue(DeadNamespaceState.isGarbage("42", new Liveness.Gone()), "no namespace has the inode");
        assertTrue(DeadNamespaceState.isGarbage(null, new Liveness.Gone()));
        assertFalse(DeadNamespaceState.isGarbage("42", new Liveness.Live(42)), "the same namespace");
        assertTrue(DeadNamespaceState.isGarbage("42", new Liveness.Live(43)), "the inode was reused by another namespace");
        assertFalse(DeadNamespaceState.isGarbage("42", new Liveness.Live(0)), "cookie unknown: kept");
        assertFalse(DeadNamespaceState.isGarbage(null, new Liveness.Live(43)), "no cookie recorded (kernel < 5.14): kept");
    }

    @Test
    void sweepRemovesTheDirectoriesOfGoneNamespacesOnly() throws Exception {
        Path gone = state("1001", "7"), reused = state("1002", "8"), same = state("1003", "9"), unknown = state("1004", "10");
        List<Long> removed = DeadNamespaceState.sweep(List.of(gone, reused, same, unknown), inode -> switch ((int) inode) {
            case 1001 -> new Liveness.Gone();
            case 1002 -> new Liveness.Live(99);
            case 1003 -> new Liveness.Live(9);
            default -> new Liveness.Live(0);
        });
        assertEquals(List.of(1001L, 1002L), removed);
        assertFalse(Files.exists(gone));
        assertFalse(Files.exists(reused));
        assertTrue(Files.isRegularFile(same.resolve("att/portmap/net/c@eth0")));
        assertTrue(Files.isRegularFile(unknown.resolve("key/set/k")));
    }

    @Test
    void aDirectoryInUseIsNotTouched() throws Exception {
        Path busy = state("1005", "7");
        try (Flock held = Flock.lock(busy.resolve("lock"))) {
            assertEquals(List.of(), DeadNamespaceState.sweep(List.of(busy), inode -> new Liveness.Gone()));
        }
        assertTrue(Files.isRegularFile(busy.resolve("att/portmap/net/c@eth0")));
    }

    /** A user that waited on the lock while its holder removed the file sees it replaced (ElementStore then locks the new one). */
    @Test
    void aWaiterOfARemovedLockNoticesIt() throws Exception {
        Path lock = base.resolve("lock");
        Flock sweeper = Flock.lock(lock);
        assertTrue(sweeper.stillAtPath());
        java.util.concurrent.CompletableFuture<Flock> waiter = java.util.concurrent.CompletableFuture.supplyAsync(() -> Flock.lock(lock),
                r -> Thread.ofPlatform().start(r));
        awaitBlockedOn(lock);
        Files.delete(lock);
        sweeper.close();
        try (Flock w = waiter.get()) {
            assertFalse(w.stillAtPath(), "the file it holds is gone");
        }
        try (Flock fresh = Flock.lock(lock)) {
            assertTrue(fresh.stillAtPath());
        }
    }

    /**
     * Waits until some thread of this process waits in flock(2) on the file: /proc/locks lists each
     * waiter as "N: -> FLOCK ADVISORY WRITE PID MAJ:MIN:INODE ...", so the test knows the waiter is
     * blocked before it removes the file, instead of guessing with a sleep.
     */
    private static void awaitBlockedOn(Path file) throws Exception {
        long inode = (Long) Files.getAttribute(file, "unix:ino");
        String pid = Long.toString(ProcessHandle.current().pid());
        for (int i = 0; i < 2_000; i++) {
            for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 6 && f[1].equals("->") && f[5].equals(pid) && f[6].endsWith(":" + inode)) return;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no thread of this process waited for the lock on " + file + " within 10 s");
    }

    @Test
    void onlyInodeNamedDirectoriesAreState() {
        assertEquals(4026531840L, DeadNamespaceState.inodeOf(Path.of("/x/4026531840")));
        assertNull(DeadNamespaceState.inodeOf(Path.of("/x/lock")));
        assertNull(DeadNamespaceState.inodeOf(Path.of("/x/12a")));
    }

    private Path state(String inode, String cookie) throws Exception {
        Path d = base.resolve(inode);
        Files.createDirectories(d.resolve("att/portmap/net"));
        Files.createDirectories(d.resolve("key/set"));
        Files.writeString(d.resolve("att/portmap/net/c@eth0"), "{}");
        Files.writeString(d.resolve("key/set/k"), "portmap/net/c@eth0\n");
        Files.writeString(d.resolve(StateFiles.COOKIE_FILE), cookie);
        Files.writeString(d.resolve("lock"), "");
        return d;
    }
}
