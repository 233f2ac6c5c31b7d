package io.jcni.plugins.common.nft;

import io.jcni.common.AtomicFile;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Flock;
import io.jcni.linux.LiveNetns;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Collects the {@link ElementStore} state of network namespaces that are gone for good.
 *
 * <p>State is kept per namespace ({@code BASE/INODE/}, with the namespace's cookie in
 * {@code netns-cookie}). When the namespace the plugins ran in disappears (a host namespace that
 * is recreated, a node agent's namespace torn down), its elements went with its ruleset, but its
 * directory stays, and nothing running in another namespace would ever look at it. A GC removes
 * every such directory under its base.
 *
 * <p><b>Gone for good</b>, decided under the directory's own lock (so no plugin is using it):
 * no live namespace has the directory's inode ({@link LiveNetns#scan}: tasks, open descriptors and
 * bind mounts), or the live namespace that has it carries another cookie (the kernel reused the
 * inode; cookies are never reused). A namespace found alive whose cookie cannot be read, or state
 * without a recorded cookie (kernel before 5.14) in a live inode, is kept: doubt keeps state; and
 * nothing is swept from a PID namespace other than the initial one (a container without the
 * host's PIDs), where a namespace held by an invisible process would look gone.
 * A namespace created after the scan cannot lose state to the sweep: its first user waits for the
 * lock the sweep holds, and then finds the lock file replaced and locks the new one
 * ({@link Flock#stillAtPath}), in a directory without the dead namespace's state.
 */
final class DeadNamespaceState {
    private DeadNamespaceState() {}

    /** What is known about the live namespace with a directory's inode. */
    sealed interface Liveness {
        /** No namespace has the inode. */
        record Gone() implements Liveness {}

        /** A live namespace has it; {@code cookie} 0 when it could not be read or the kernel has none. */
        record Live(long cookie) implements Liveness {}
    }

    /** The decision, pure: whether state recorded under {@code recordedCookie} (null: none recorded) is garbage. */
    static boolean isGarbage(String recordedCookie, Liveness now) {
        // Not a pattern switch: those are linked at run time on every plugin start (types.Json says why).
        if (now instanceof Liveness.Live l) {
            return l.cookie() != 0 && recordedCookie != null && !recordedCookie.equals(Long.toString(l.cookie()));
        }
        return true; // Gone
    }

    /**
     * Removes the state directory of every namespace under {@code base} that is gone for good,
     * except {@code ownInode}'s (the caller's namespace, alive by definition). Never fails: a
     * directory that cannot be judged or removed now is left for the next GC. Returns the inodes
     * whose state was removed.
     */
    static List<Long> sweep(Path base, long ownInode) {
        List<Path> candidates = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(base)) {
            for (Path p : ds) {
                Long inode = inodeOf(p);
                if (inode != null && inode != ownInode && Files.isDirectory(p)) candidates.add(p);
            }
        } catch (IOException e) {
            return List.of();
        }
        if (candidates.isEmpty() || !LiveNetns.seesEveryProcess()) return List.of();
        java.util.Set<Long> inodes = new java.util.HashSet<>();
        for (Path p : candidates) inodes.add(inodeOf(p));
        Map<Long, String> live = LiveNetns.scan(inodes);
        return sweep(candidates, inode -> {
            String path = live.get(inode);
            if (path == null) return new Liveness.Gone();
            try {
                return new Liveness.Live(LiveNetns.cookie(path));
            } catch (ErrnoException | IllegalStateException e) {
                return new Liveness.Live(0); // it went meanwhile, or cannot be entered: judged next time
            }
        });
    }

    /** {@link #sweep(Path, long)} with the liveness lookup given (tests). */
    static List<Long> sweep(List<Path> dirs, java.util.function.LongFunction<Liveness> liveness) {
        List<Long> removed = new ArrayList<>();
        for (Path dir : dirs) {
            try {
                if (collect(dir, liveness)) removed.add(inodeOf(dir));
            } catch (RuntimeException e) {
                // left for the next GC
            }
        }
        return removed;
    }

    private static boolean collect(Path dir, java.util.function.LongFunction<Liveness> liveness) {
        Optional<Flock> taken = Flock.tryLock(dir.resolve("lock"));
        if (taken.isEmpty()) return false; // in use right now: alive
        try (Flock lock = taken.get()) {
            if (!lock.stillAtPath()) return false;
            if (!isGarbage(readCookie(dir), liveness.apply(inodeOf(dir)))) return false;
            deleteTree(dir.resolve("att"));
            deleteTree(dir.resolve("key"));
            Files.deleteIfExists(dir.resolve(StateFiles.COOKIE_FILE));
            Files.deleteIfExists(dir.resolve(StateFiles.COOKIE_FILE + ".tmp"));
            AtomicFile.removeTemporaries(dir.resolve(StateFiles.COOKIE_FILE));
            Files.deleteIfExists(dir.resolve(StateFiles.SKELETONS_FILE));
            Files.deleteIfExists(dir.resolve(StateFiles.SKELETONS_FILE + ".tmp"));
            AtomicFile.removeTemporaries(dir.resolve(StateFiles.SKELETONS_FILE));
            Files.deleteIfExists(dir.resolve("lock")); // still held: a waiter finds it replaced
            try {
                Files.deleteIfExists(dir);
            } catch (DirectoryNotEmptyException e) {
                // a new user of the inode made its lock file meanwhile: the directory is its now
            }
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readCookie(Path dir) {
        try {
            return Files.readString(dir.resolve(StateFiles.COOKIE_FILE), StandardCharsets.US_ASCII).strip();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The inode a state directory is named by, or null for anything else under the base. */
    static Long inodeOf(Path dir) {
        String n = dir.getFileName().toString();
        if (n.isEmpty() || n.length() > 18) return null;
        for (int i = 0; i < n.length(); i++) if (n.charAt(i) < '0' || n.charAt(i) > '9') return null;
        return Long.parseLong(n);
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (NoSuchFileException e) {
            // nothing there
        }
    }
}
