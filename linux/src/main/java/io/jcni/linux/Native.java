package io.jcni.linux;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The JNI bindings to libjcni.so and the code that finds and loads it.
 *
 * <p>JNI rather than the FFM API because plugins are short-lived processes: a first FFM downcall
 * costs a large, fixed warm-up per process while a JNI call costs about a millisecond (numbers in
 * linux/README.md). Every method throws {@link ErrnoException} on failure.
 *
 * <p>Where the library comes from, in order: the system property {@code jcni.native.lib} (an
 * absolute path); the file next to these classes in a build tree; otherwise the copy inside the jar,
 * extracted once per library version to {@code /run/jcni/native} (or {@code java.io.tmpdir} when
 * that is not writable) under a name carrying its CRC-32 and size.
 */
final class Native {
    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_DIRECTORY = 0200000;
    static final int O_NOCTTY = 0400;
    /** With it open(2) returns at once on a FIFO without a writer instead of waiting for one. */
    static final int O_NONBLOCK = 04000;

    static final int S_IFMT = 0170000;
    static final int S_IFREG = 0100000;
    static final int S_IFDIR = 0040000;

    /** statfs f_type of nsfs, where namespace files live (linux/magic.h). */
    static final long NSFS_MAGIC = 0x6e736673L;
    /** Kernels before 3.19 showed namespace files on procfs; the reference accepts both. */
    static final long PROC_SUPER_MAGIC = 0x9fa0L;

    static final int CLONE_NEWNET = 0x40000000;

    static final long MS_BIND = 4096;
    static final long MS_REC = 16384;
    static final long MS_SHARED = 1 << 20;
    static final int MNT_DETACH = 2;

    static final int LOCK_SH = 1;
    static final int LOCK_EX = 2;
    static final int LOCK_NB = 4;
    static final int LOCK_UN = 8;

    static final int AF_NETLINK = 16;
    static final int SOCK_RAW = 3;
    static final int SOL_SOCKET = 1;
    static final int SO_SNDBUF = 7;
    static final int SO_RCVBUF = 8;
    static final int SOL_NETLINK = 270;

    private static final String RESOURCE = "io/jcni/linux/native/libjcni.so";
    private static final String CACHE_DIR = "/run/jcni/native";

    static {
        load();
    }

    private Native() {}

    static native int open(String path, int flags, int mode);

    static native void close(int fd);

    static native void setns(int fd, int nstype);

    static native void unshare(int flags);

    static native void mount(String source, String target, String fstype, long flags, String data);

    static native void umount2(String target, int flags);

    static native int gettid();

    /** ioctl(NS_GET_NSTYPE): the CLONE_NEW* type of a namespace file; ENOTTY if it is not one. */
    static native int nsType(int fd);

    /** fstat's st_ino: two namespace fds refer to the same namespace when their inodes are equal. */
    static native long inode(int fd);

    /** statfs(2)'s f_type of the file system holding path (symlinks followed): what a path is, without opening it. */
    static native long statfsType(String path);

    static native long fstatfsType(int fd);

    /** fstat(2): out[0] = st_mode, out[1] = st_size. */
    static native void fstat(int fd, long[] out);

    /** read(2) of at most len (and at most 8 KiB) bytes into buf at off; 0 at end of file. */
    static native int read(int fd, byte[] buf, int off, int len);

    static native int socket(int domain, int type, int protocol);

    /** Binds a netlink socket and returns the port id the kernel assigned. */
    static native int bindNetlink(int fd, int groups);

    static native void setsockoptInt(int fd, int level, int name, int value);

    static native void setReceiveTimeout(int fd, int millis);

    /** Sends to the kernel; {@code buf} must be a direct buffer. */
    static native int send(int fd, ByteBuffer buf, int offset, int length);

    /** One datagram from the kernel; EAGAIN when the receive timeout passes, EMSGSIZE if truncated. */
    static native int receive(int fd, ByteBuffer buf, int offset, int length);

    /** flock(2); false only when LOCK_NB is set and the lock is held elsewhere. */
    static native boolean flock(int fd, int operation);

    static native String errnoName(int errno);

    static native String strerror(int errno);

    @SuppressWarnings("restricted") // loading libjcni is the point; callers pass --enable-native-access
    private static void load() {
        String explicit = System.getProperty("jcni.native.lib");
        if (explicit != null && !explicit.isEmpty()) {
            System.load(explicit);
            return;
        }
        // Resolved through our own code source rather than Class.getResource: the jar: URL
        // machinery costs several milliseconds in a cold JVM, a large share of a plugin run.
        Path origin;
        try {
            origin = Path.of(Native.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | RuntimeException e) {
            throw linkError("cannot locate the jcni-linux classes", e);
        }
        if (Files.isDirectory(origin)) {
            System.load(origin.resolve(RESOURCE).toString()); // a build tree: load in place
            return;
        }
        try {
            System.load(extract(origin).toString());
        } catch (IOException e) {
            throw linkError("cannot extract " + RESOURCE + " from " + origin, e);
        }
    }

    /**
     * The library copied out of the jar, named by its CRC-32 and size as recorded in the jar's
     * central directory (no need to read it to know whether the cached copy is this version).
     * Written to a temporary file and renamed, so concurrent first runs race benignly.
     */
    private static Path extract(Path jar) throws IOException {
        return extract(jar, Path.of(CACHE_DIR),
                Path.of(System.getProperty("java.io.tmpdir"), "jcni-native-" + System.getProperty("user.name")));
    }

    static Path extract(Path jar, Path... cacheDirs) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            ZipEntry entry = zip.getEntry(RESOURCE);
            if (entry == null) throw new IOException("no " + RESOURCE + " in " + jar);
            String name = "libjcni-" + Long.toHexString(entry.getCrc()) + "-" + entry.getSize() + ".so";
            IOException failure = null;
            for (Path dir : cacheDirs) {
                Path target = dir.resolve(name);
                if (Files.isRegularFile(target)) return target;
                try {
                    Files.createDirectories(dir);
                    Path tmp = Files.createTempFile(dir, ".libjcni", ".tmp");
                    try (InputStream in = zip.getInputStream(entry)) {
                        Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } finally {
                        Files.deleteIfExists(tmp);
                    }
                    return target;
                } catch (IOException e) {
                    if (failure == null) failure = e; else failure.addSuppressed(e);
                }
            }
            throw failure;
        }
    }

    private static UnsatisfiedLinkError linkError(String message, Exception cause) {
        UnsatisfiedLinkError error = new UnsatisfiedLinkError("libjcni.so: " + message + ": " + cause);
        error.initCause(cause);
        return error;
    }
}
