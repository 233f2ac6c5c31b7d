package io.jcni.plugins.ipam.hostlocal;

import io.jcni.linux.ErrnoException;
import io.jcni.linux.Flock;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * An exclusive lock on a network's {@code <dataDir>/<network>/lock} file, held for a whole
 * ADD/DEL/GC (upstream's {@code disk.FileLock}, backend/disk/lock.go).
 *
 * <p>It is a real {@code flock(2)}, the call the Go plugin makes, so a jcni process and a reference
 * host-local working on the same network at the same moment exclude each other. (Java's own
 * FileChannel.lock takes fcntl record locks, which on Linux do not conflict with flock.) Each
 * {@link #lock()} opens its own descriptor, and flock locks belong to the open file description, so
 * threads of one process exclude each other too.
 */
public final class StoreLock implements Closeable {
    private final Path lockFile;
    private Flock held;

    private StoreLock(Path lockFile) {
        this.lockFile = lockFile;
    }

    static StoreLock open(Path lockFile) {
        return new StoreLock(lockFile);
    }

    /** Blocks until the lock is held. */
    public void lock() throws IOException {
        Flock f;
        try {
            f = Flock.lock(lockFile);
        } catch (ErrnoException e) {
            throw new IOException(e.getMessage(), e);
        }
        synchronized (this) {
            held = f;
        }
    }

    public void unlock() {
        Flock f;
        synchronized (this) {
            f = held;
            held = null;
        }
        if (f != null) f.close();
    }

    @Override
    public void close() {
        unlock();
    }
}
