package io.jcni.common;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one way jcni replaces a file: write a temporary file next to it, give it its permissions,
 * rename it over the target. A reader sees the old content or the new, never half of one.
 *
 * <p>The temporary file is named {@code .NAME.tmp-PID-RANDOM}: hidden, unique per writer, and
 * carrying the writer's pid, so {@link #removeAbandoned} can tell the leftover of a killed writer
 * from the file a live writer is still filling. Readers that list a directory skip such names with
 * {@link #isTemporary}.
 *
 * <p>A writer that holds a lock every writer of the file takes ({@link #writeLocked}) uses one
 * fixed name instead, {@code .NAME.tmp-locked}: under the lock such a file can only be what a
 * killed writer left, so the next write replaces it and the owner that deletes the file removes
 * it by name, without listing the directory.
 *
 * <p>Written without streams or lambdas: standalone plugins call this on their start-up path
 * (see plugins/README.md).
 */
public final class AtomicFile {
    private AtomicFile() {}

    /** How much a completed {@link #write} promises after a crash of the machine (a killed process never matters: the rename is atomic). */
    public enum Durability {
        /**
         * The file and the directory entry are on disk when write returns (fsync of both): state
         * that must outlive a power loss (cached results, leases, ownership records).
         */
        DURABLE,
        /**
         * No fsync: after a power loss the file may hold its old content, or none. For files that
         * are remade or re-derived anyway (pid files, launchers, caches) and for hot paths that
         * cannot afford the fsync (see the module README for the measured cost).
         */
        ATOMIC_ONLY
    }

    // Spelled out with Set.of, not PosixFilePermissions.fromString: its EnumSet reads the enum's
    // constants by reflection, a millisecond of every standalone plugin (plugins/README.md).
    /** rw------- */
    public static final Set<PosixFilePermission> PRIVATE = Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    /** rw-r--r-- */
    public static final Set<PosixFilePermission> PUBLIC = Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.GROUP_READ, PosixFilePermission.OTHERS_READ);
    /** rwxr-xr-x */
    public static final Set<PosixFilePermission> EXECUTABLE = Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_EXECUTE);

    private static final String TMP_MARK = ".tmp-";
    private static final String LOCKED_SUFFIX = TMP_MARK + "locked";
    /** The most a temporary name adds to its target's: '.', ".tmp-", a pid of up to 10 digits, '-', 16 hex digits. */
    public static final int MAX_TEMPORARY_EXTRA = 1 + 5 + 10 + 1 + 16;

    /** Writes {@code content} as UTF-8; see {@link #write(Path, byte[], Set, Durability)}. */
    public static void write(Path target, String content, Set<PosixFilePermission> permissions, Durability durability)
            throws IOException {
        write(target, content.getBytes(StandardCharsets.UTF_8), permissions, durability);
    }

    /**
     * Replaces {@code target} with {@code content}, mode {@code permissions} exactly (whatever the
     * umask). The parent directory must exist. On failure the temporary file is removed and the
     * target is unchanged.
     */
    public static void write(Path target, byte[] content, Set<PosixFilePermission> permissions, Durability durability)
            throws IOException {
        Path tmp = target.toAbsolutePath().resolveSibling(temporaryName(target.getFileName().toString(),
                ProcessHandle.current().pid(), ThreadLocalRandom.current().nextLong()));
        write(target, tmp, content, permissions, durability);
    }

    /** Writes {@code content} as UTF-8; see {@link #writeLocked(Path, byte[], Set, Durability)}. */
    public static void writeLocked(Path target, String content, Set<PosixFilePermission> permissions, Durability durability)
            throws IOException {
        writeLocked(target, content.getBytes(StandardCharsets.UTF_8), permissions, durability);
    }

    /**
     * {@link #write(Path, byte[], Set, Durability)} for a caller that holds a lock every writer of
     * {@code target} takes: the temporary file is {@link #lockedTemporary}, so one a writer killed
     * between write and rename left is replaced here, and removed by {@link #removeTemporaries} or
     * by name ({@link #deleteLocked}) with no directory listing.
     */
    public static void writeLocked(Path target, byte[] content, Set<PosixFilePermission> permissions, Durability durability)
            throws IOException {
        Path tmp = lockedTemporary(target);
        Files.deleteIfExists(tmp);
        write(target, tmp, content, permissions, durability);
    }

    /** {@code .NAME.tmp-locked}: the temporary file of {@link #writeLocked}. */
    public static Path lockedTemporary(Path target) {
        return target.toAbsolutePath().resolveSibling("." + target.getFileName() + LOCKED_SUFFIX);
    }

    /**
     * Under the lock of {@link #writeLocked}'s writers: deletes {@code target} and the temporary
     * file a killed writer may have left, by name. Returns whether {@code target} was there.
     */
    public static boolean deleteLocked(Path target) throws IOException {
        Files.deleteIfExists(lockedTemporary(target));
        return Files.deleteIfExists(target);
    }

    private static void write(Path target, Path tmp, byte[] content, Set<PosixFilePermission> permissions, Durability durability)
            throws IOException {
        Path dir = tmp.getParent();
        boolean durable = durability == Durability.DURABLE;
        try {
            try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(permissions))) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) ch.write(buf);
                if (durable) ch.force(true);
            }
            // The create mode passed through the umask; the target's mode must not depend on it.
            Files.setPosixFilePermissions(tmp, permissions);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        if (durable) syncDirectory(dir);
    }

    /** fsync of a directory: makes a rename or a removal in it survive a power loss. */
    public static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, READ)) {
            ch.force(true);
        }
    }

    private static final Set<OpenOption> READ = Set.of(StandardOpenOption.READ);

    /** {@code .NAME.tmp-PID-RANDOM} */
    static String temporaryName(String name, long pid, long random) {
        return "." + name + TMP_MARK + pid + "-" + Long.toHexString(random);
    }

    /** The prefix of every temporary file of {@code target}'s writers: an owner that removes a file removes these too. */
    public static String temporaryPrefix(Path target) {
        return "." + target.getFileName() + TMP_MARK;
    }

    /** Whether a file name is one of {@link #write}'s or {@link #writeLocked}'s temporary files (of a live writer or not). */
    public static boolean isTemporary(String fileName) {
        return writerPid(fileName) > 0
                || (fileName.startsWith(".") && fileName.endsWith(LOCKED_SUFFIX) && fileName.length() > 1 + LOCKED_SUFFIX.length());
    }

    /** The pid in a temporary file's name ({@code .NAME.tmp-PID-RANDOM}), or -1 when it is no such name. */
    public static long writerPid(String fileName) {
        int mark = fileName.lastIndexOf(TMP_MARK);
        if (!fileName.startsWith(".") || mark < 1) return -1;
        int start = mark + TMP_MARK.length();
        int dash = fileName.indexOf('-', start);
        if (dash <= start || dash - start > 10 || dash == fileName.length() - 1) return -1;
        long pid = 0;
        for (int i = start; i < dash; i++) {
            char c = fileName.charAt(i);
            if (c < '0' || c > '9') return -1;
            pid = pid * 10 + (c - '0');
        }
        for (int i = dash + 1; i < fileName.length(); i++) {
            char c = fileName.charAt(i);
            if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) return -1;
        }
        return pid == 0 ? -1 : pid;
    }

    /**
     * Removes, in {@code dir} (not below), the temporary files whose writer is no longer running: a
     * process killed between creating and renaming one. A live writer's file, and any file that is
     * not a temporary file of {@link #write}, is left alone ({@link #writeLocked}'s carry no pid:
     * their owner removes them under its lock). Returns how many were removed; a missing directory
     * has none.
     */
    public static int removeAbandoned(Path dir) throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                long pid = writerPid(p.getFileName().toString());
                if (pid > 0 && ProcessHandle.of(pid).isEmpty() && Files.deleteIfExists(p)) removed++;
            }
        } catch (NoSuchFileException e) {
            return 0;
        }
        return removed;
    }

    /**
     * Removes every temporary file of {@code target} (of any writer, {@link #writeLocked}'s too): for
     * the owner that deletes {@code target} itself. Lists the directory; under a lock,
     * {@link #deleteLocked} needs no listing.
     */
    public static void removeTemporaries(Path target) throws IOException {
        String prefix = temporaryPrefix(target);
        Path dir = target.toAbsolutePath().getParent();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.startsWith(prefix)) Files.deleteIfExists(p);
            }
        } catch (NoSuchFileException e) {
            // no directory: no temporaries
        }
    }
}
