package io.jcni.linux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Kernel parameters under /proc/sys.
 *
 * <p>/proc/sys/net shows the network namespace of the thread that opens the file (verified by
 * SysctlTest), so the {@code Netns} overloads simply do the file I/O on the namespace's thread.
 * The overloads without a namespace use the calling thread's, which for a virtual thread is
 * its carrier's: the process's original namespace.
 *
 * <p>Keys are dotted ({@code net.ipv4.ip_forward}) or slashed ({@code net/ipv4/conf/eth0.100/forwarding});
 * use slashes when a component such as an interface name contains a dot.
 */
public final class Sysctl {
    private static final Path ROOT = Path.of("/proc/sys");

    private Sysctl() {}

    /** The file behind {@code key}. */
    public static Path path(String key) {
        String rel = key.indexOf('/') >= 0 ? key : key.replace('.', '/');
        while (rel.startsWith("/")) rel = rel.substring(1);
        if (rel.isEmpty() || rel.contains("..")) throw new IllegalArgumentException("bad sysctl key: " + key);
        return ROOT.resolve(rel);
    }

    /** The value, trimmed; ENOENT for an unknown key. */
    public static String get(String key) {
        Path p = path(key);
        try {
            // Read to the end as a stream: /proc/sys files report size 0, and Files.readString
            // trusts the size and returns only the first byte.
            try (var in = Files.newInputStream(p)) {
                return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            }
        } catch (IOException e) {
            throw failure(e, "read sysctl " + key);
        }
    }

    /** Writes {@code value}; ENOENT for an unknown key, EINVAL etc. as the kernel reports them. */
    public static void set(String key, String value) {
        Path p = path(key);
        try {
            Files.writeString(p, value, StandardCharsets.US_ASCII, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw failure(e, "write sysctl " + key + "=" + value);
        }
    }

    public static String get(Netns ns, String key) {
        return ns.run(() -> get(key));
    }

    public static void set(Netns ns, String key, String value) {
        ns.exec(() -> set(key, value));
    }

    private static ErrnoException failure(IOException e, String op) {
        int errno;
        if (e instanceof NoSuchFileException) {
            errno = Errno.ENOENT;
        } else if (e instanceof AccessDeniedException) {
            errno = Errno.EACCES;
        } else {
            errno = errnoFromMessage(e.getMessage());
        }
        return new ErrnoException(errno, op, errno == Errno.EIO ? e.getMessage() : null, e);
    }

    /** The JDK reports a write's errno only as strerror text ("Invalid argument"); map it back. */
    private static int errnoFromMessage(String message) {
        if (message != null) {
            for (int n = 1; n < 134; n++) {
                if (message.endsWith(Errno.message(n))) return n;
            }
        }
        return Errno.EIO;
    }
}
