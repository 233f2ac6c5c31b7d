package io.jcni.linux;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads a small regular file whose path someone else chose (a config's {@code resolvConf}, a
 * state file under a configured directory) with a bound on everything: open(2) never blocks (a
 * FIFO would wait for a writer forever), only a regular file is read (not {@code /dev/zero} or a
 * device), and at most {@code limit} bytes are ever held, whatever the file's size says or does
 * while it is read (a 3 GB file is refused at once, before any read).
 */
public final class SmallFile {
    private SmallFile() {}

    /**
     * The file's bytes.
     *
     * @throws ErrnoException ENOENT and the like from open(2); EINVAL if it is not a regular file;
     *                        EFBIG if it holds more than {@code limit} bytes
     */
    public static byte[] read(Path path, int limit) {
        String op = "read " + path;
        int fd;
        try {
            fd = Native.open(path.toString(), Native.O_RDONLY | Native.O_NONBLOCK | Native.O_NOCTTY, 0);
        } catch (ErrnoException e) {
            throw e.during(op);
        }
        try {
            long[] st = new long[2];
            Native.fstat(fd, st);
            if ((st[0] & Native.S_IFMT) != Native.S_IFREG) {
                throw new ErrnoException(Errno.EINVAL, op, "not a regular file", null);
            }
            if (st[1] > limit) throw tooLarge(op, limit);
            // The size is a hint (0 for /proc files; the file may grow): read until EOF, never past limit.
            byte[] buf = new byte[(int) Math.min(limit + 1L, Math.max(st[1] + 1, 4096))];
            int n = 0;
            while (true) {
                if (n == buf.length) {
                    if (n > limit) throw tooLarge(op, limit);
                    buf = Arrays.copyOf(buf, (int) Math.min(limit + 1L, 2L * buf.length));
                }
                int r = Native.read(fd, buf, n, buf.length - n);
                if (r == 0) break;
                n += r;
            }
            if (n > limit) throw tooLarge(op, limit);
            return Arrays.copyOf(buf, n);
        } catch (ErrnoException e) {
            throw e.operation().equals(op) ? e : e.during(op);
        } finally {
            Native.close(fd);
        }
    }

    /** {@link #read} decoded as UTF-8 (malformed input replaced, as Go strings tolerate it). */
    public static String readUtf8(Path path, int limit) {
        return new String(read(path, limit), StandardCharsets.UTF_8);
    }

    private static ErrnoException tooLarge(String op, int limit) {
        return new ErrnoException(Errno.EFBIG, op, "larger than " + limit + " bytes", null);
    }
}
