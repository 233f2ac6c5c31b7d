package io.jcni.plugins.ipam.hostlocal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * An exclusive lock on a network's {@code <dataDir>/<network>/lock} file, held for a whole
 * ADD/DEL/GC (upstream's {@code disk.FileLock}, backend/disk/lock.go, built on go-filemutex's
 * {@code flock(LOCK_EX)}).
 */
public interface StoreLock extends Closeable {
    /** Blocks until the lock is held. */
    void lock() throws IOException;

    void unlock() throws IOException;

    /**
     * The single place choosing the lock implementation.
     *
     * <p>TODO(flock): switch to a {@code flock(2)}-based lock from the linux module once it
     * exists. The reference plugin takes {@code flock(LOCK_EX)}; {@link ChannelStoreLock} takes an
     * fcntl (POSIX record) lock, and on Linux the two kinds do not exclude each other. Until then
     * jcni processes exclude each other, but a jcni process and a reference Go process running at
     * the same moment on the same network do not.
     */
    static StoreLock open(Path lockFile) throws IOException {
        return new ChannelStoreLock(lockFile);
    }
}
