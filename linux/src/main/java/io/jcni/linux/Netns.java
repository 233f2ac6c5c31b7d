package io.jcni.linux;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * An open network namespace: a file descriptor on an nsfs file, plus (lazily) one dedicated
 * platform thread that lives inside it.
 *
 * <p>setns(2) changes the namespace of one OS thread only. Java cannot pin virtual threads or
 * pooled threads to an OS thread for the duration of a task, so code that must run "inside" the
 * namespace ({@link #run}, {@link #exec}) is handed to a platform thread that entered the
 * namespace for this object alone; at {@link #close()} it goes back to the process's namespace
 * and waits for the next Netns ({@link NetnsThreads}). The caller's thread is never
 * moved. A netlink socket remembers the namespace it was created in, so {@link Rtnl#open(Netns)}
 * only creates its socket on that thread and is then usable from any thread.
 */
public final class Netns implements AutoCloseable {
    /** Where {@code ip netns add} keeps named namespaces; shared with iproute2 and the Go plugins. */
    public static final Path RUN_DIR = Path.of("/var/run/netns");

    private final String path;
    private int fd;
    private NetnsThreads.Worker worker;

    private Netns(String path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    /**
     * Opens the network namespace at {@code path} (e.g. /var/run/netns/c1 or /proc/PID/ns/net).
     *
     * <p>What the path is gets checked before it is opened, as the reference's {@code ns.GetNS}
     * does (statfs: the nsfs magic): a FIFO would block open(2) until a writer comes, a device
     * file may act on open. The open itself is non-blocking and the descriptor is checked again
     * (fstatfs, then the namespace type), so a path swapped in between cannot block us either.
     *
     * @throws ErrnoException ENOENT for a missing path, EINVAL if it is not a network namespace
     */
    public static Netns open(String path) {
        String op = "open netns " + path;
        long magic;
        try {
            magic = Native.statfsType(path);
        } catch (ErrnoException e) {
            throw e.during(op);
        }
        checkNsfs(magic, op);
        int fd;
        try {
            fd = Native.open(path, Native.O_RDONLY | Native.O_NONBLOCK | Native.O_NOCTTY, 0);
        } catch (ErrnoException e) {
            throw e.during(op);
        }
        try {
            checkNsfs(Native.fstatfsType(fd), op);
            int type = Native.nsType(fd);
            if (type != Native.CLONE_NEWNET) {
                throw new ErrnoException(Errno.EINVAL, op, "not a network namespace", null);
            }
        } catch (ErrnoException e) {
            Native.close(fd);
            if (e.is(Errno.ENOTTY)) {
                throw new ErrnoException(Errno.EINVAL, op, "not a namespace file", e);
            }
            throw e;
        }
        return new Netns(path, fd);
    }

    private static void checkNsfs(long magic, String op) {
        if (magic != Native.NSFS_MAGIC && magic != Native.PROC_SUPER_MAGIC) {
            throw new ErrnoException(Errno.EINVAL, op, "not a namespace file (file system magic 0x"
                    + Long.toHexString(magic) + ", nsfs is 0x" + Long.toHexString(Native.NSFS_MAGIC) + ")", null);
        }
    }

    public static Netns open(Path path) {
        return open(path.toString());
    }

    /** The namespace of the calling OS thread (for a virtual thread: of its carrier). */
    public static Netns current() {
        return open("/proc/thread-self/ns/net");
    }

    /** Path of the named namespace {@code name} under {@link #RUN_DIR}. */
    public static Path pathOf(String name) {
        checkName(name);
        return RUN_DIR.resolve(name);
    }

    /**
     * Creates a new, persistent network namespace named {@code name}, like {@code ip netns add}:
     * a bind mount of the namespace onto /var/run/netns/NAME keeps it alive without any process.
     *
     * @throws ErrnoException EEXIST if the name is taken
     */
    public static Netns create(String name) {
        Path file = pathOf(name);
        String op = "create netns " + name;
        ensureSharedRunDir();
        try {
            Native.close(Native.open(file.toString(), Native.O_RDONLY | Native.O_CREAT | Native.O_EXCL, 0));
        } catch (ErrnoException e) {
            throw e.during(op);
        }
        try {
            onFreshThread(op, () -> {
                // Only this short-lived thread moves; it ends right after the bind mount.
                Native.unshare(Native.CLONE_NEWNET);
                String self = "/proc/self/task/" + Native.gettid() + "/ns/net";
                Native.mount(self, file.toString(), "none", Native.MS_BIND, null);
                return null;
            });
            return open(file.toString());
        } catch (RuntimeException e) {
            try {
                Native.umount2(file.toString(), Native.MNT_DETACH);
            } catch (ErrnoException ignored) {
                // Not mounted yet: nothing to undo.
            }
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // The original error matters more.
            }
            throw e instanceof ErrnoException ee ? ee.during(op) : e;
        }
    }

    /**
     * Creates a new network namespace that has no name and lives only as long as this object is
     * open: nothing under /var/run/netns, so a killed caller leaves nothing behind. For short
     * scratch work such as renaming a device where no other device can clash (host-device). When it
     * is closed with devices still inside, the kernel destroys the virtual ones and moves physical
     * ones to the initial namespace, so callers move their devices out first.
     */
    public static Netns createAnonymous() {
        String op = "create anonymous netns";
        int fd = onFreshThread(op, () -> {
            // Only this short-lived thread moves; the descriptor keeps the namespace alive after it.
            Native.unshare(Native.CLONE_NEWNET);
            return Native.open("/proc/self/task/" + Native.gettid() + "/ns/net", Native.O_RDONLY, 0);
        });
        return new Netns("anonymous netns", fd);
    }

    /**
     * Deletes the named namespace, like {@code ip netns delete}: unmount and unlink. The namespace
     * itself lives on while a process or open fd still refers to it.
     *
     * @throws ErrnoException ENOENT if there is no such name
     */
    public static void delete(String name) {
        Path file = pathOf(name);
        String op = "delete netns " + name;
        try {
            Native.umount2(file.toString(), Native.MNT_DETACH);
        } catch (ErrnoException e) {
            // EINVAL: a leftover file that is not a mount point; still remove it.
            if (!e.is(Errno.EINVAL)) throw e.during(op);
        }
        try {
            Files.delete(file);
        } catch (NoSuchFileException e) {
            throw new ErrnoException(Errno.ENOENT, op, null, e);
        } catch (IOException e) {
            throw new ErrnoException(Errno.EIO, op, e.getMessage(), e);
        }
    }

    /** Whether a named namespace exists. */
    public static boolean exists(String name) {
        return Files.exists(pathOf(name));
    }

    public String path() {
        return path;
    }

    /** The namespace file descriptor, e.g. for {@link Rtnl#setNamespace}; owned by this object. */
    public int fd() {
        checkOpen();
        return fd;
    }

    /** The namespace's inode number: equal inodes mean the same namespace. */
    public long inode() {
        return Native.inode(fd());
    }

    /**
     * The cookie of the calling thread's network namespace: unlike an inode, the kernel never gives
     * it to another namespace (until reboot). 0 when the kernel is older than 5.14.
     */
    public static long currentCookie() {
        return Native.netnsCookie();
    }

    public boolean sameAs(Netns other) {
        return inode() == other.inode();
    }

    /**
     * Runs {@code task} on this namespace's dedicated thread and returns its value; its exception,
     * checked or not, is rethrown here. Calls from inside that thread run directly.
     */
    public <T, X extends Exception> T run(Task<T, X> task) throws X {
        NetnsThreads.Worker w;
        synchronized (this) {
            checkOpen();
            if (worker != null && Thread.currentThread().threadId() == worker.thread.threadId()) return task.call();
            if (worker == null) worker = new NetnsThreads.Worker(fd, path);
            w = worker;
        }
        return w.submit(task);
    }

    /**
     * Runs {@code task} on the calling thread, moved into this namespace for the call and back
     * where it was after it: for a pooled platform thread that would otherwise hand the whole task
     * to this namespace's thread and wait (jcnid runs each request in its caller's namespace so).
     * Not for virtual threads, whose carrier would move, nor for a namespace thread.
     */
    public <T, X extends Exception> T runOnCallingThread(Task<T, X> task) throws X {
        Thread self = Thread.currentThread();
        if (self.isVirtual()) throw new IllegalStateException("runOnCallingThread on a virtual thread");
        int back = Native.open("/proc/thread-self/ns/net", Native.O_RDONLY, 0);
        try {
            Native.setns(fd(), Native.CLONE_NEWNET);
            try {
                return task.call();
            } finally {
                Native.setns(back, Native.CLONE_NEWNET);
            }
        } finally {
            Native.close(back);
        }
    }

    /** {@link #run} for code without a result. */
    public <X extends Exception> void exec(Action<X> action) throws X {
        run(new Task<Void, X>() {
            @Override
            public Void call() throws X {
                action.run();
                return null;
            }
        });
    }

    /** Stops the namespace thread and closes the descriptor; idempotent. */
    @Override
    public void close() {
        NetnsThreads.Worker w;
        int f;
        synchronized (this) {
            w = worker;
            worker = null;
            f = fd;
            fd = -1;
        }
        if (w != null) w.stop();
        if (f >= 0) Native.close(f);
    }

    @Override
    public String toString() {
        return "Netns[" + path + "]";
    }

    private void checkOpen() {
        if (fd < 0) throw new IllegalStateException("netns " + path + " is closed");
    }

    private static void checkName(String name) {
        if (name == null || name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
            throw new IllegalArgumentException("bad netns name: " + name);
        }
    }

    /**
     * Makes /var/run/netns a shared mount point, as iproute2 does, so that namespaces mounted later
     * also appear in mount namespaces created from this one.
     */
    private static void ensureSharedRunDir() {
        try {
            Files.createDirectories(RUN_DIR);
        } catch (IOException e) {
            throw new ErrnoException(Errno.EIO, "create " + RUN_DIR, e.getMessage(), e);
        }
        String dir = RUN_DIR.toString();
        try {
            Native.mount("none", dir, null, Native.MS_SHARED | Native.MS_REC, null);
        } catch (ErrnoException e) {
            if (!e.is(Errno.EINVAL)) throw e;
            // Not a mount point yet: bind it onto itself, then it can be made shared.
            Native.mount(dir, dir, "none", Native.MS_BIND | Native.MS_REC, null);
            Native.mount("none", dir, null, Native.MS_SHARED | Native.MS_REC, null);
        }
    }

    private static <T> T onFreshThread(String name, Task<T, RuntimeException> task) {
        Object[] result = new Object[1];
        RuntimeException[] failure = new RuntimeException[1];
        Thread t = Thread.ofPlatform().name("jcni-" + name).daemon().start(() -> {
            try {
                result[0] = task.call();
            } catch (RuntimeException e) {
                failure[0] = e;
            }
        });
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
        if (failure[0] != null) throw failure[0];
        @SuppressWarnings("unchecked")
        T value = (T) result[0];
        return value;
    }

    /** Code to run inside a namespace, with a result. */
    @FunctionalInterface
    public interface Task<T, X extends Exception> {
        T call() throws X;
    }

    /** Code to run inside a namespace, without a result. */
    @FunctionalInterface
    public interface Action<X extends Exception> {
        void run() throws X;
    }
}
