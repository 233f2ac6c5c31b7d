package io.jcni.linux;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * An exclusive flock(2) on a file, interoperable with the Go plugins' lock files (host-local's
 * IPAM store uses the same call). Unlike {@link java.nio.channels.FileLock}, which uses fcntl
 * record locks, flock locks are what other CNI implementations take.
 *
 * <p>The file is created (mode 0644) if missing; a directory is locked as is. Anything else (a
 * FIFO, a device) is refused without blocking: it is opened non-blocking and checked.
 *
 * <p><b>Virtual threads.</b> A thread blocked in flock(2) is inside a native call, so a virtual
 * thread waiting there pins its carrier. jcnid once deadlocked that way: every carrier was pinned
 * waiting for a lock whose holder, a virtual thread waiting for its {@code nft} child, needed a
 * carrier to go on and release it. So on a virtual thread {@link #lock} only tries the lock in
 * place; when it is taken, the wait happens on a platform thread while the virtual thread is
 * parked (unmounted). Platform threads wait in place, as before.
 */
public final class Flock implements AutoCloseable {
    private final Path path;
    private int fd;

    private Flock(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /** Waits for the lock. */
    public static Flock lock(Path path) {
        int fd = openFor(path);
        try {
            if (Thread.currentThread().isVirtual()) {
                if (!Native.flock(fd, Native.LOCK_EX | Native.LOCK_NB)) waitOnPlatformThread(fd);
            } else {
                Native.flock(fd, Native.LOCK_EX);
            }
            return new Flock(path, fd);
        } catch (ErrnoException e) {
            Native.close(fd);
            throw e.during("lock " + path);
        }
    }

    /**
     * The blocking flock(2) on a platform thread of its own, while the calling virtual thread
     * parks. Not interruptible: once the helper has the lock it must reach its owner, who releases it.
     */
    private static void waitOnPlatformThread(int fd) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread.ofPlatform().name("jcni-flock-wait").daemon().start(() -> {
            try {
                Native.flock(fd, Native.LOCK_EX);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    done.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof ErrnoException ee) throw ee;
                    if (e.getCause() instanceof Error err) throw err;
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** The lock if it is free now, else empty. */
    public static Optional<Flock> tryLock(Path path) {
        int fd = openFor(path);
        try {
            if (Native.flock(fd, Native.LOCK_EX | Native.LOCK_NB)) return Optional.of(new Flock(path, fd));
            Native.close(fd);
            return Optional.empty();
        } catch (ErrnoException e) {
            Native.close(fd);
            throw e.during("lock " + path);
        }
    }

    public Path path() {
        return path;
    }

    /**
     * Whether the locked file is still the one at {@link #path}: a lock file may be deleted by
     * its holder (state of a namespace that is gone), and whoever waited on the old file then holds
     * a lock nobody else takes. Such a waiter drops its lock and locks the path again.
     */
    public synchronized boolean stillAtPath() {
        if (fd < 0) return false;
        try {
            Object ino = Files.getAttribute(path, "unix:ino");
            return ino instanceof Long l && l == Native.inode(fd);
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Releases the lock (closing the descriptor would too; unlocking first is explicit). */
    @Override
    public synchronized void close() {
        if (fd < 0) return;
        int f = fd;
        fd = -1;
        try {
            Native.flock(f, Native.LOCK_UN);
        } finally {
            Native.close(f);
        }
    }

    /**
     * Opens what to lock without ever blocking in open(2) (O_NONBLOCK: a FIFO would wait for a
     * writer), then refuses anything but a regular file or a directory.
     */
    private static int openFor(Path path) {
        String p = path.toString();
        int flags = Native.O_NONBLOCK | Native.O_NOCTTY;
        int fd;
        try {
            if (Files.isDirectory(path)) {
                fd = Native.open(p, Native.O_RDONLY | Native.O_DIRECTORY | flags, 0);
            } else {
                try {
                    fd = Native.open(p, Native.O_RDWR | Native.O_CREAT | flags, 0644);
                } catch (ErrnoException e) {
                    // Files that refuse writers, such as a netns bind mount (nsfs: EPERM), are still
                    // lockable through a read-only descriptor, as the Go plugins lock them.
                    if (!(e.is(Errno.EPERM) || e.is(Errno.EACCES)) || !Files.exists(path)) throw e;
                    fd = Native.open(p, Native.O_RDONLY | flags, 0);
                }
            }
        } catch (ErrnoException e) {
            throw e.during("lock " + path);
        }
        long[] st = new long[2];
        try {
            Native.fstat(fd, st);
        } catch (ErrnoException e) {
            Native.close(fd);
            throw e.during("lock " + path);
        }
        long type = st[0] & Native.S_IFMT;
        if (type != Native.S_IFREG && type != Native.S_IFDIR) {
            Native.close(fd);
            throw new ErrnoException(Errno.EINVAL, "lock " + path, "not a regular file or directory", null);
        }
        return fd;
    }
}
