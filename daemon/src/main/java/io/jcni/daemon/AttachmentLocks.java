package io.jcni.daemon;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One fair lock per attachment (plugin type, container ID, interface name, network name), so two
 * requests for the same attachment run one after the other, in arrival order, while different
 * attachments run in parallel. The plugin type is part of the key because a plugin may delegate
 * to another one (bridge calls host-local with the same container, interface and network) through
 * the shim and so through this daemon: without it the delegate would wait for its caller forever.
 * Entries are reference-counted and dropped when nobody holds or waits for them.
 */
final class AttachmentLocks {

    static final class Entry {
        final ReentrantLock lock = new ReentrantLock(true);
        int refs;
    }

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    static String key(String type, String containerId, String ifname, String network) {
        return type + '\0' + containerId + '\0' + ifname + '\0' + network;
    }

    /** Takes the lock of key, waiting interruptibly; returns what {@link #unlock} needs. */
    Entry lock(String key) throws InterruptedException {
        Entry e = entries.compute(key, (k, v) -> {
            Entry n = v == null ? new Entry() : v;
            n.refs++;
            return n;
        });
        try {
            e.lock.lockInterruptibly();
            return e;
        } catch (InterruptedException ie) {
            release(key);
            throw ie;
        }
    }

    void unlock(String key, Entry e) {
        e.lock.unlock();
        release(key);
    }

    private void release(String key) {
        entries.computeIfPresent(key, (k, v) -> --v.refs == 0 ? null : v);
    }

    /** Attachments with a holder or a waiter (for tests). */
    int size() {
        return entries.size();
    }
}
