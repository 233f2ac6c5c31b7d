package io.jcni.plugins.ipam.hostlocal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link StoreLock} from {@link FileChannel#lock()}: an fcntl lock between processes, plus a
 * JVM-wide mutex per lock file between threads.
 *
 * <p>Why the extra pieces: fcntl locks belong to the process, so two threads would both "hold" it
 * (Java reports that as {@code OverlappingFileLockException}); and closing any descriptor of the
 * file drops every fcntl lock the process has on it. So each lock file gets one mutex and one
 * channel for the life of the JVM, and the channel is never closed while it may hold the lock.
 * Plugin processes are short-lived, so the never-closed channels cost nothing.
 */
final class ChannelStoreLock implements StoreLock {
    private static final ConcurrentHashMap<Path, Shared> SHARED = new ConcurrentHashMap<>();

    private static final class Shared {
        final ReentrantLock mutex = new ReentrantLock();
        FileChannel channel; // guarded by mutex
    }

    private final Path path;
    private final Shared shared;
    private FileLock held;

    ChannelStoreLock(Path lockFile) throws IOException {
        this.path = lockFile.toAbsolutePath().normalize();
        this.shared = SHARED.computeIfAbsent(path, p -> new Shared());
    }

    @Override
    public void lock() throws IOException {
        shared.mutex.lock();
        try {
            if (shared.channel == null || !shared.channel.isOpen()) {
                shared.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            }
            held = shared.channel.lock();
        } catch (IOException | RuntimeException e) {
            shared.mutex.unlock();
            throw e;
        }
    }

    @Override
    public void unlock() throws IOException {
        if (held == null) return;
        try {
            held.release();
        } finally {
            held = null;
            shared.mutex.unlock();
        }
    }

    @Override
    public void close() throws IOException {
        unlock();
    }
}
