package io.jcni.plugins.common.link;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.LiveNetns;
import io.jcni.linux.Link;
import io.jcni.linux.Rtnl;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

/**
 * The mark a host link jcni creates (a host veth, bandwidth's ifb) carries from its first moment
 * until its owner tag replaces it.
 *
 * <p>The kernel does not take IFLA_IFALIAS when it creates a link, so the owner tag
 * ({@link OwnedLinks}) needs a second request; a kill between the two used to leave a host end
 * that nothing could attribute, and GC of a container namespace kept alive left it for good. The
 * kernel does take IFLA_GROUP at creation: the host end is born in the <em>birth group</em> of
 * its creating process ({@link #BASE} + its pid), and the request that sets the tag puts it back
 * in group 0 ({@link Rtnl#setAliasAndGroup}). A link still in a birth group, without alias, is
 * either between the two requests of a live ADD or left by a creator that died there.
 *
 * <p>GC deletes it only in the second case, and this is why that is safe: only the creator ever
 * sends the tagging request. GC reads the links, then checks that the creator is gone, then reads
 * the link again: if the creator tagged it before it died, the second read shows the tag and GC
 * keeps it; if not, nobody can tag it any more. A live creator (a standalone plugin in the middle
 * of its ADD, or jcnid, whose threads always finish a creation by tagging or deleting) keeps its
 * links. A creator's pid that was reused by another process also keeps them: a leak, never a
 * wrong deletion. Pids mean something only in one PID namespace, so a creator outside the
 * initial one marks its links with {@link #BASE} alone (creator unknown), which GC never deletes,
 * and GC outside the initial PID namespace deletes no marked link at all: for those the state is
 * what it was before the mark (the pair goes with its container namespace or its DEL).
 *
 * <p>The range is disjoint from {@link Links#RETIRED_GROUP} (0x6a636e69, "jcni"): the top ten
 * bits differ.
 */
public final class BirthMarks {
    /** The birth groups are {@code BASE + pid}; BASE alone marks a link whose creator is unknown. */
    static final int BASE = 0x6a000000;
    /** pid_max is at most 2^22 (PID_MAX_LIMIT on 64-bit kernels). */
    static final int PID_BITS = 22;
    private static final int PID_MASK = (1 << PID_BITS) - 1;
    private static final Path PROC = Path.of("/proc");

    private BirthMarks() {}

    /** The birth group of a creator with this pid (0 or out of range: creator unknown). */
    static int groupOf(long pid) {
        return pid > 0 && pid <= PID_MASK ? BASE | (int) pid : BASE;
    }

    /** The creator's pid of a birth group, 0 when unknown, -1 when the group is not a birth group. */
    static long creatorOf(int group) {
        return (group & ~PID_MASK) == BASE ? group & PID_MASK : -1;
    }

    /** Whether the link is a host veth or ifb still carrying its birth mark: in a birth group, without alias. */
    static boolean isUntagged(Link l) {
        return ("veth".equals(l.kind()) || "ifb".equals(l.kind())) && creatorOf(l.group()) >= 0
                && (l.alias() == null || l.alias().isEmpty());
    }

    /** Whether GC may delete the link: untagged, and its known creator is not alive. */
    static boolean isOrphan(Link l, LongPredicate alive) {
        long creator = isUntagged(l) ? creatorOf(l.group()) : 0;
        return creator > 0 && !alive.test(creator);
    }

    /** The group this process marks the host veths and ifbs it creates with. */
    public static int ownGroup() {
        return OwnGroup.VALUE;
    }

    private static final class OwnGroup {
        static final int VALUE = compute();

        private static int compute() {
            if (!LiveNetns.seesEveryProcess()) return BASE;
            try {
                // /proc/self names this process as GC's /proc/<pid> will: one readlink, no ProcessHandle start-up.
                return groupOf(Long.parseLong(Files.readSymbolicLink(PROC.resolve("self")).toString()));
            } catch (IOException | NumberFormatException | UnsupportedOperationException e) {
                return BASE;
            }
        }
    }

    /**
     * Whether process {@code pid} can still send a request: it exists and is not a zombie (a
     * zombie leader whose other threads still run is alive). Anything unreadable counts as alive.
     */
    static boolean isAlive(long pid) {
        Path dir = PROC.resolve(Long.toString(pid));
        String stat;
        try {
            stat = new String(Files.readAllBytes(dir.resolve("stat")), StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return !Files.notExists(dir);
        }
        int close = stat.lastIndexOf(')'); // the command name may hold anything, ')' included
        char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
        if (state != 'Z' && state != 'X') return true;
        try (Stream<Path> tasks = Files.list(dir.resolve("task"))) {
            return tasks.limit(2).count() > 1;
        } catch (IOException e) {
            return Files.exists(dir);
        }
    }

    /**
     * Deletes the marked links of {@code host}'s namespace whose creator died between creating and
     * tagging them (see the class comment); returns their names. Nothing outside the initial PID
     * namespace.
     */
    public static List<String> collectOrphans(Rtnl host, List<Link> links) {
        return collectOrphans(host, links, BirthMarks::isAlive);
    }

    static List<String> collectOrphans(Rtnl host, List<Link> links, LongPredicate alive) {
        List<String> removed = new ArrayList<>();
        if (!LiveNetns.seesEveryProcess()) return removed;
        for (Link l : links) {
            if (!isOrphan(l, alive)) continue;
            // The creator is gone now; read again: a tag it set before it died shows here.
            try {
                Link now = host.link(l.index());
                if (!now.name().equals(l.name()) || now.group() != l.group() || !isUntagged(now)) continue;
                host.deleteLink(now.index());
                removed.add(now.name());
            } catch (ErrnoException e) {
                if (!e.is(Errno.ENODEV)) throw e; // gone meanwhile (its namespace, a DEL, another GC)
            }
        }
        return removed;
    }
}
