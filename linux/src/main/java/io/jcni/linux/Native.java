package io.jcni.linux;

import io.jcni.common.AtomicFile;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
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
 * extracted once per library version to {@code /run/jcni/native} (or a per-user directory under
 * {@code java.io.tmpdir} when that is not writable) under a name carrying its CRC-32 and size. A
 * cache directory or file that another user owns or may write is refused, never loaded.
 */
final class Native {
    static {
        load(); // before the constants below: their values come from the library
    }

    // Read from libjcni, never written here: the values differ between architectures.
    static final int O_RDONLY = intConstant("O_RDONLY");
    static final int O_RDWR = intConstant("O_RDWR");
    static final int O_CREAT = intConstant("O_CREAT");
    static final int O_EXCL = intConstant("O_EXCL");
    static final int O_DIRECTORY = intConstant("O_DIRECTORY");
    static final int O_NOCTTY = intConstant("O_NOCTTY");
    /** With it open(2) returns at once on a FIFO without a writer instead of waiting for one. */
    static final int O_NONBLOCK = intConstant("O_NONBLOCK");

    static final int S_IFMT = intConstant("S_IFMT");
    static final int S_IFREG = intConstant("S_IFREG");
    static final int S_IFDIR = intConstant("S_IFDIR");

    /** statfs f_type of nsfs, where namespace files live (linux/magic.h). */
    static final long NSFS_MAGIC = constant("NSFS_MAGIC");
    /** Kernels before 3.19 showed namespace files on procfs; the reference accepts both. */
    static final long PROC_SUPER_MAGIC = constant("PROC_SUPER_MAGIC");

    static final int CLONE_NEWNET = intConstant("CLONE_NEWNET");

    static final long MS_BIND = constant("MS_BIND");
    static final long MS_REC = constant("MS_REC");
    static final long MS_SHARED = constant("MS_SHARED");
    static final int MNT_DETACH = intConstant("MNT_DETACH");

    static final int LOCK_SH = intConstant("LOCK_SH");
    static final int LOCK_EX = intConstant("LOCK_EX");
    static final int LOCK_NB = intConstant("LOCK_NB");
    static final int LOCK_UN = intConstant("LOCK_UN");

    static final int AF_NETLINK = intConstant("AF_NETLINK");
    static final int SOCK_RAW = intConstant("SOCK_RAW");
    static final int SOL_SOCKET = intConstant("SOL_SOCKET");
    static final int SO_SNDBUF = intConstant("SO_SNDBUF");
    static final int SO_RCVBUF = intConstant("SO_RCVBUF");
    static final int SOL_NETLINK = intConstant("SOL_NETLINK");

    private static final String RESOURCE = "io/jcni/linux/native/libjcni.so";
    private static final String CACHE_DIR = "/run/jcni/native";

    private Native() {}

    /** The value of a C constant as libjcni was compiled; ErrnoException(ENOENT) for an unknown name. */
    static native long constant(String name);

    private static int intConstant(String name) {
        return Math.toIntExact(constant(name));
    }

    static native int open(String path, int flags, int mode);

    static native void close(int fd);

    static native void setns(int fd, int nstype);

    /** Sends a finished NETLINK_ROUTE request about {@code delayMillis} from now from a detached process; see jcni.c. */
    static native void sendDetached(byte[] request, int delayMillis);

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

    /** SO_NETNS_COOKIE of the calling thread's network namespace; 0 when the kernel lacks it. */
    static native long netnsCookie();

    /** Binds a netlink socket and returns the port id the kernel assigned. */
    static native int bindNetlink(int fd, int groups);

    static native void setsockoptInt(int fd, int level, int name, int value);

    static native void setReceiveTimeout(int fd, int millis);

    /** Sends to the kernel; {@code buf} must be a direct buffer. */
    static native int send(int fd, ByteBuffer buf, int offset, int length);

    /** One datagram from the kernel; EAGAIN when the receive timeout passes, EMSGSIZE if truncated. */
    static native int receive(int fd, ByteBuffer buf, int offset, int length);

    /** A UDP socket bound to 0.0.0.0:port and to device ifname, with SO_BROADCAST and SO_REUSEADDR. */
    static native int udpBindToDevice(String ifname, int port);

    /** sendto(2) of the first len bytes of buf to an IPv4 address (4 bytes) and port; at most 65507 bytes. */
    static native void udpSendTo(int fd, byte[] buf, int len, byte[] addr, int port);

    /**
     * One datagram into buf (truncated to its length), its sender's address into from (4 bytes),
     * waiting at most millis; returns its full length (more than buf.length when truncated), 0 when none came.
     */
    static native int udpReceive(int fd, byte[] buf, int millis, byte[] from);

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
            // A local, not a static field: this runs from the static initialiser, before later fields are set.
            FileAttribute<Set<PosixFilePermission>> privateDir =
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
            IOException failure = null;
            for (Path dir : cacheDirs) {
                try {
                    Files.createDirectories(dir, privateDir);
                    requirePrivate(dir);
                    Path target = dir.resolve(name);
                    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                        requirePrivate(target);
                        return target;
                    }
                    AtomicFile.removeAbandoned(dir);
                    try (InputStream in = zip.getInputStream(entry)) {
                        // Not fsynced: a copy lost to a crash is extracted again.
                        AtomicFile.write(target, in.readAllBytes(), AtomicFile.PRIVATE, AtomicFile.Durability.ATOMIC_ONLY);
                    }
                    return target;
                } catch (IOException e) {
                    if (failure == null) failure = e; else failure.addSuppressed(e);
                }
            }
            throw failure;
        }
    }

    /**
     * A library is loaded into a process that runs as root: it may come only from a file and
     * directory that no other user could have created or can change. A fixed name under a shared
     * directory such as /tmp could otherwise be planted by anyone before our first run.
     */
    static void requirePrivate(Path p) throws IOException {
        PosixFileAttributes a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String problem = null;
        if (a.isSymbolicLink()) problem = "is a symbolic link";
        else if (!a.owner().getName().equals(System.getProperty("user.name"))) problem = "is owned by " + a.owner().getName();
        else if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)
                || a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) problem = "is writable by other users";
        if (problem != null) throw new IOException("refusing " + p + ": it " + problem);
    }

    private static UnsatisfiedLinkError linkError(String message, Exception cause) {
        UnsatisfiedLinkError error = new UnsatisfiedLinkError("libjcni.so: " + message + ": " + cause);
        error.initCause(cause);
        return error;
    }
}
