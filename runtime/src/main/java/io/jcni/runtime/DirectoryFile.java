package io.jcni.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Reads a file found by listing a configuration or state directory, refusing what a directory
 * listing can hold but a reader must not open: a FIFO (open(2) waits for a writer forever), a
 * device ({@code /dev/zero} never ends), a directory, a symlink whose target lies outside the
 * directory (the file would be someone else's, a secret perhaps), and anything larger than the
 * caller's limit. At most {@code limit} bytes are ever held, whatever the file does while it is read.
 *
 * <p>Plain Java, as the runtime has no native code: the type is checked with {@code lstat} before
 * the file is opened with {@code O_NOFOLLOW}. A FIFO swapped in between the two by someone who can
 * write the directory would still block; the linux module's {@code SmallFile} (non-blocking open,
 * then fstat) closes that window for the code that can use it.
 */
public final class DirectoryFile {
    private DirectoryFile() {}

    /** A network configuration file (libcni reads them whole; the largest real ones are a few KiB). */
    public static final int CONFIG_LIMIT = 1 << 20;

    /** Why a file was not read: its message names the file and says what it is. */
    public static final class RefusedException extends IOException {
        RefusedException(String message) {
            super(message);
        }
    }

    /**
     * The file's bytes.
     *
     * @param dir the directory it was listed in: a symlink may point only at a regular file inside it
     * @throws NoSuchFileException when it is gone (or a dangling symlink)
     * @throws RefusedException when it is not a regular file inside {@code dir}, or larger than {@code limit}
     */
    public static byte[] read(Path dir, Path file, int limit) throws IOException {
        Path target = file;
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink()) {
            target = file.toRealPath();
            Path realDir = dir.toRealPath();
            if (!target.startsWith(realDir) || target.equals(realDir)) {
                throw new RefusedException(file + " is a symlink to " + target + ", outside " + dir + "; not read");
            }
            a = Files.readAttributes(target, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        }
        if (!a.isRegularFile()) throw new RefusedException(file + " is " + kind(target) + ", not a regular file; not read");
        if (a.size() > limit) throw tooLarge(file, limit);
        // toRealPath resolved every link, so O_NOFOLLOW only refuses one swapped in since.
        try (SeekableByteChannel ch = Files.newByteChannel(target, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
             InputStream in = Channels.newInputStream(ch)) {
            byte[] bytes = in.readNBytes(limit + 1);
            if (bytes.length > limit) throw tooLarge(file, limit);
            return bytes;
        }
    }

    /** {@link #read} decoded as UTF-8 (malformed input replaced). */
    public static String readUtf8(Path dir, Path file, int limit) throws IOException {
        return new String(read(dir, file, limit), StandardCharsets.UTF_8);
    }

    private static RefusedException tooLarge(Path file, int limit) {
        return new RefusedException(file + " is larger than " + limit + " bytes; not read");
    }

    /** What a non-regular file is, in words, for the message. */
    static String kind(Path p) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.isDirectory()) return "a directory";
            if (a.isSymbolicLink()) return "a symlink";
            Object mode = Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            if (mode instanceof Integer m) {
                return switch (m & 0170000) {
                    case 0010000 -> "a FIFO";
                    case 0020000 -> "a character device";
                    case 0060000 -> "a block device";
                    case 0140000 -> "a socket";
                    default -> "a special file";
                };
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            // the type is only for the message
        }
        return "a special file";
    }
}
