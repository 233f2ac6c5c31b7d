package io.jcni.linux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The network namespaces that exist now, found the only ways a namespace can be kept alive and
 * reached: a task in it ({@code /proc/PID/task/TID/ns/net}; threads of one process may sit in
 * different namespaces, as jcnid's do), an open descriptor on it ({@code /proc/PID/fd/N}), or a
 * bind mount of it ({@code ip netns add}, a runtime's own netns directory) in the mount namespace
 * of some process ({@code /proc/PID/mountinfo}). Each is keyed by the namespace's inode, with a
 * path through which it can be opened.
 *
 * <p>A scan is a snapshot: a namespace created after it is not in it. Callers that delete state
 * of namespaces the scan did not find must hold a lock that a user of a new namespace takes first.
 */
public final class LiveNetns {
    private static final Path PROC = Path.of("/proc");

    /** The initial PID namespace's inode (the kernel's PROC_PID_INIT_INO): fixed, see include/linux/proc_ns.h. */
    static final long INITIAL_PID_NAMESPACE = 0xEFFFFFFCL;

    private LiveNetns() {}

    /**
     * Whether {@link #scan} can see every process of the machine: only from the initial PID
     * namespace. In a container with a PID namespace of its own, namespaces held by processes
     * outside it are invisible, so "not found" would not mean "gone".
     */
    public static boolean seesEveryProcess() {
        Long pidns = nsInode(Path.of("/proc/self/ns/pid"), "pid");
        return pidns != null && pidns == INITIAL_PID_NAMESPACE;
    }

    /** Inode of every live network namespace → a path that opens it (the first found). */
    public static Map<Long, String> scan() {
        return scan(null);
    }

    /**
     * {@link #scan()}, stopping as soon as every namespace in {@code wanted} is found (null: find
     * all). Cheapest holders first: bind mounts (one mountinfo per mount namespace), then tasks,
     * then open descriptors (the most entries: a JVM alone has hundreds). Only a namespace that is
     * really gone costs the full walk.
     */
    public static Map<Long, String> scan(Set<Long> wanted) {
        Map<Long, String> live = new LinkedHashMap<>();
        List<Path> pids = new ArrayList<>();
        for (Path p : children(PROC)) if (isNumber(p.getFileName().toString())) pids.add(p);
        Set<Long> mountNamespacesSeen = new HashSet<>();
        for (Path pid : pids) {
            // Every process of a mount namespace sees the same mounts: read them once per namespace.
            Long mnt = nsInode(pid.resolve("ns/mnt"), "mnt");
            if (mnt == null || !mountNamespacesSeen.add(mnt)) continue;
            try {
                String info = Files.readString(pid.resolve("mountinfo"), StandardCharsets.UTF_8);
                for (var m : netnsMounts(info).entrySet()) {
                    live.putIfAbsent(m.getKey(), pid.resolve("root").toString() + m.getValue());
                }
            } catch (IOException e) {
                // the process ended meanwhile
            }
        }
        if (foundAll(live, wanted)) return live;
        for (Path pid : pids) {
            for (Path task : children(pid.resolve("task"))) note(live, task.resolve("ns/net"));
        }
        if (foundAll(live, wanted)) return live;
        for (Path pid : pids) {
            for (Path fd : children(pid.resolve("fd"))) note(live, fd);
            if (foundAll(live, wanted)) return live;
        }
        return live;
    }

    private static boolean foundAll(Map<Long, String> live, Set<Long> wanted) {
        return wanted != null && live.keySet().containsAll(wanted);
    }

    /**
     * The cookie of the namespace at {@code path}, which the kernel never gives to another
     * namespace; 0 when the kernel has none (before 5.14).
     *
     * @throws ErrnoException when the path no longer opens a network namespace
     */
    public static long cookie(String path) {
        try (Netns ns = Netns.open(path)) {
            return ns.run(Netns::currentCookie);
        }
    }

    /**
     * The network namespaces bind-mounted in one mount namespace, from its mountinfo: inode →
     * mount point (octal escapes undone). A line reads {@code ID PARENT MAJ:MIN ROOT MOUNTPOINT
     * OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS}, and for an nsfs bind mount ROOT is
     * {@code net:[INODE]}.
     */
    static Map<Long, String> netnsMounts(String mountinfo) {
        Map<Long, String> out = new LinkedHashMap<>();
        for (String line : mountinfo.split("\n")) {
            String[] f = line.split(" ");
            if (f.length < 5) continue;
            int dash = List.of(f).indexOf("-");
            if (dash < 0 || dash + 1 >= f.length || !f[dash + 1].equals("nsfs")) continue;
            Long inode = inodeIn(f[3], "net");
            if (inode != null) out.putIfAbsent(inode, unescape(f[4]));
        }
        return out;
    }

    /** {@code KIND:[INODE]} (what a namespace link reads and nsfs mounts show as root) → INODE, or null. */
    static Long inodeIn(String s, String kind) {
        String head = kind + ":[";
        if (!s.startsWith(head) || !s.endsWith("]")) return null;
        String n = s.substring(head.length(), s.length() - 1);
        return isNumber(n) && n.length() < 19 ? Long.parseLong(n) : null;
    }

    /** mountinfo escapes space, tab, newline and backslash as \ooo. */
    static String unescape(String s) {
        if (s.indexOf('\\') < 0) return s;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && isOctal(s, i + 1)) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static boolean isOctal(String s, int from) {
        if (from + 3 > s.length()) return false;
        for (int i = from; i < from + 3; i++) if (s.charAt(i) < '0' || s.charAt(i) > '7') return false;
        return true;
    }

    private static void note(Map<Long, String> live, Path link) {
        Long inode = nsInode(link, "net");
        if (inode != null) live.putIfAbsent(inode, link.toString());
    }

    private static Long nsInode(Path link, String kind) {
        try {
            return inodeIn(Files.readSymbolicLink(link).toString(), kind);
        } catch (IOException | UnsupportedOperationException e) {
            return null; // gone meanwhile, not a link, or not ours to read
        }
    }

    private static List<Path> children(Path dir) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) out.add(p);
        } catch (IOException e) {
            // the process ended meanwhile
        }
        return out;
    }

    private static boolean isNumber(String s) {
        if (s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) if (s.charAt(i) < '0' || s.charAt(i) > '9') return false;
        return true;
    }
}
