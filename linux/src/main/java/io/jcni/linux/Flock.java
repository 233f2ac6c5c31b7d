package io.jcni.linux;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * An exclusive flock(2) on a file, interoperable with the Go plugins' lock files (host-local's
 * IPAM store uses the same call). Unlike {@link java.nio.channels.FileLock}, which uses fcntl
 * record locks, flock locks are what other CNI implementations take.
 *
 * <p>The file is created (mode 0644) if missing; a directory is locked as is. Blocking
 * {@link #lock} holds its OS thread while it waits, so call it from a platform thread when waits
 * can be long.
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
            Native.flock(fd, Native.LOCK_EX);
            return new Flock(path, fd);
        } catch (ErrnoException e) {
            Native.close(fd);
            throw e.during("lock " + path);
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

    private static int openFor(Path path) {
        String p = path.toString();
        try {
            if (Files.isDirectory(path)) return Native.open(p, Native.O_RDONLY | Native.O_DIRECTORY, 0);
            try {
                return Native.open(p, Native.O_RDWR | Native.O_CREAT, 0644);
            } catch (ErrnoException e) {
                // Files that refuse writers, such as a netns bind mount (nsfs: EPERM), are still
                // lockable through a read-only descriptor, as the Go plugins lock them.
                if (!(e.is(Errno.EPERM) || e.is(Errno.EACCES)) || !Files.exists(path)) throw e;
                return Native.open(p, Native.O_RDONLY, 0);
            }
        } catch (ErrnoException e) {
            throw e.during("lock " + path);
        }
    }
}
