package io.jcni.testfixtures;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The one private world of a root test: uniquely named network namespaces (a "host" one, where the
 * software under test puts its bridges, veths, rules and sysctls, and containers), a scratch
 * directory, and the processes the test started in them. Nothing touches the root namespace: every
 * command runs with {@code ip -n}, {@code ip netns exec} or {@code nsenter} in a namespace made here.
 *
 * <p>{@link #close()} undoes everything in reverse order of creation, whatever happened (a step that
 * fails does not stop the rest), stops processes still inside a namespace before deleting it (naming
 * them on stderr), and then checks for leaks: a namespace, process or the directory still there fails the
 * test, named. A test that leaves something behind would break the next one, or another engineer's
 * run on the same host, in a way nobody could trace back.
 *
 * <p>Names are {@code TAG-ROLE-ID} (e.g. {@code jw-h-1a2b3c4d}), with a random ID per world.
 */
public class World implements AutoCloseable {
    /** The namespaces' mount points. */
    public static final Path NETNS_DIR = Path.of("/var/run/netns");

    /** This world's random part of every name. */
    public final String id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    /** The name prefix of this kind of world (e.g. {@code jts} for the end-to-end suite). */
    public final String tag;
    /** The "host" namespace's name. */
    public final String host;
    /** A scratch directory, removed on close. */
    public final Path dir;

    /** Undo steps, the last one first; synchronized: tests create containers from several threads. */
    private final Deque<Step> undo = new ArrayDeque<>();
    private final List<String> namespaces = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();
    private int containers;

    private record Step(String what, AutoCloseable action) {}

    /** A world whose names start with {@code tag}, with its host namespace. */
    public World(String tag) throws IOException {
        this(tag, null);
    }

    /** The same with the host namespace named {@code hostName} (null: {@code TAG-h-ID}), for a test whose peers know it by that name. */
    public World(String tag, String hostName) throws IOException {
        this.tag = tag;
        this.dir = Files.createTempDirectory("jcni-" + tag + "-");
        this.host = hostName != null ? hostName : name("h");
        try {
            namespace(host);
        } catch (RuntimeException | Error e) {
            closeQuietly(e);
            throw e;
        }
    }

    /** A world named {@code jw-...}. */
    public static World create() throws IOException {
        return new World("jw");
    }

    /** {@code TAG-ROLE-ID}: a name unique to this world. */
    public final String name(String role) {
        return tag + "-" + role + "-" + id;
    }

    /** The path of namespace {@code name}, as CNI_NETNS carries it. */
    public static String path(String name) {
        return NETNS_DIR.resolve(name).toString();
    }

    /** The name of the namespace at {@code path} (a bare name stays as it is). */
    public static String nsName(String pathOrName) {
        return Path.of(pathOrName).getFileName().toString();
    }

    // ---- namespaces

    /** Creates namespace {@code name} with lo up, deleted on close; returns its path. */
    public final String namespace(String name) {
        Proc.ok("ip", "netns", "add", name);
        synchronized (undo) {
            namespaces.add(name);
            undo.push(new Step("netns " + name, () -> {
                killProcessesInside(name);
                deleteNamespace(name);
            }));
        }
        ip(name, "link", "set", "lo", "up");
        return path(name);
    }

    /** Container namespace {@code i}, {@code TAG-cI-ID}; returns its path. */
    public final String container(int i) {
        return namespace(name("c" + i));
    }

    /** The next container namespace; returns its path. */
    public final String container() {
        int i;
        synchronized (undo) {
            i = containers++;
        }
        return container(i);
    }

    /** Deletes one of this world's namespaces (a name or path) before the world closes; gone already is fine (the leak check still looks for it). */
    public final void deleteNamespace(String nameOrPath) {
        String name = nsName(nameOrPath);
        if (Files.exists(NETNS_DIR.resolve(name))) Proc.run(List.of("ip", "netns", "del", name));
    }

    // ---- commands in a namespace

    /** {@code ip -n NS ARGS}; fails the test on a non-zero exit; returns the output. */
    public static String ip(String ns, String... args) {
        return Proc.ok(concat(List.of("ip", "-n", nsName(ns)), args));
    }

    /**
     * {@code cmd} prefixed to run in {@code ns} by nsenter, for processes the test stops by pid (nsenter
     * execs the command): unlike {@code ip netns exec} it keeps the host's /sys, where dockerd finds its cgroups.
     */
    public static List<String> inNs(String ns, List<String> cmd) {
        List<String> c = new ArrayList<>(List.of("nsenter", "--net=" + path(nsName(ns))));
        c.addAll(cmd);
        return c;
    }

    /**
     * {@code cmd} prefixed to run in {@code ns} by {@code ip netns exec}, which also mounts the
     * namespace's own /sys (a reference plugin reading /sys/class/net sees the namespace's links).
     */
    public static List<String> exec(String ns, List<String> cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", nsName(ns)));
        c.addAll(cmd);
        return c;
    }

    /** Runs {@code cmd} in {@code ns} with extra environment and stdin (null: none), stderr apart, within {@code timeoutSeconds}. */
    public static Proc.Out run(String ns, Map<String, String> env, String stdin, int timeoutSeconds, String... cmd) {
        ProcessBuilder pb = new ProcessBuilder(exec(ns, List.of(cmd)));
        if (env != null) pb.environment().putAll(env);
        return Proc.run(pb, stdin, timeoutSeconds);
    }

    /** Runs {@code cmd} in {@code ns} (stderr merged, 30 s); the exit code and output. */
    public static Proc.Out in(String ns, String... cmd) {
        return Proc.run(exec(ns, List.of(cmd)));
    }

    /** Runs {@code cmd} in {@code ns} and insists on success; returns its output. */
    public static String ok(String ns, String... cmd) {
        return in(ns, cmd).ok(nsName(ns) + ": " + String.join(" ", cmd));
    }

    /** Sets {@code key=value} sysctls in {@code ns} (never the host's: a new namespace does not start from known values, so tests set what they rely on). */
    public static void sysctl(String ns, String... keyValues) {
        ok(ns, concat(List.of("sysctl", "-qw"), keyValues));
    }

    /** One ping (up to 3 tries of one packet, 1 s each) from {@code ns} to {@code ip}. */
    public static boolean ping(String ns, String ip) {
        for (int i = 0; i < 3; i++) {
            if (in(ns, "ping", ip.contains(":") ? "-6" : "-4", "-c1", "-W1", ip).rc() == 0) return true;
        }
        return false;
    }

    // ---- links

    /** A bridge {@code name} in {@code ns}, up, with these addresses (no DAD). */
    public static void bridge(String ns, String name, String... cidrs) {
        ip(ns, "link", "add", name, "type", "bridge");
        for (String a : cidrs) ip(ns, "addr", "add", a, "dev", name, "nodad");
        ip(ns, "link", "set", name, "up");
    }

    /** A veth from {@code ifA} in {@code nsA} to {@code ifB} in {@code nsB}, both ends up; extra {@code ip link add} words (e.g. mtu 1400) apply to both ends. */
    public static void veth(String nsA, String ifA, String nsB, String ifB, String... linkOptions) {
        List<String> add = new ArrayList<>(List.of("link", "add", ifA));
        add.addAll(List.of(linkOptions));
        add.addAll(List.of("type", "veth", "peer", "name", ifB));
        add.addAll(List.of(linkOptions));
        add.addAll(List.of("netns", nsName(nsB)));
        ip(nsA, add.toArray(String[]::new));
        ip(nsA, "link", "set", ifA, "up");
        ip(nsB, "link", "set", ifB, "up");
    }

    /** A veth {@code hostIf} on bridge {@code bridge} in {@code bridgeNs} to {@code ctrIf} in {@code ctrNs}, with these addresses in the container (no DAD). */
    public static void attach(String bridgeNs, String bridge, String hostIf, String ctrNs, String ctrIf, String... ctrCidrs) {
        veth(bridgeNs, hostIf, ctrNs, ctrIf);
        ip(bridgeNs, "link", "set", hostIf, "master", bridge);
        for (String a : ctrCidrs) ip(ctrNs, "addr", "add", a, "dev", ctrIf, "nodad");
    }

    // ---- processes

    /** Starts {@code pb} and stops it on close (SIGTERM, SIGKILL after 10 s) if it still runs. */
    public final Process start(ProcessBuilder pb) throws IOException {
        Process p = pb.start();
        synchronized (undo) {
            processes.add(p);
            undo.push(new Step("pid " + p.pid() + " " + pb.command(), () -> stop(p, 10)));
        }
        return p;
    }

    /** Starts {@code cmd} inside {@code ns} (null: the test's own namespace), stdout and stderr appended to {@code log}. */
    public final Process start(String ns, List<String> cmd, Path log) throws IOException {
        return start(new ProcessBuilder(ns == null ? cmd : inNs(ns, cmd)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())));
    }

    /** SIGTERM, and SIGKILL when {@code p} has not exited after {@code seconds}; waits for the end. */
    public static void stop(Process p, int seconds) throws InterruptedException {
        if (!p.isAlive()) return;
        p.destroy();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Runs {@code action} on close, before what was created earlier is undone (e.g. a namespace handle to close, a daemon to stop). */
    public final void onClose(String what, AutoCloseable action) {
        synchronized (undo) {
            undo.push(new Step(what, action));
        }
    }

    // ---- close and the leak check

    @Override
    public final void close() {
        AssertionError failure = closeQuietly(null);
        if (failure != null) throw failure;
    }

    private AssertionError closeQuietly(Throwable cause) {
        List<String> errors = new ArrayList<>();
        while (true) {
            Step s;
            synchronized (undo) {
                s = undo.poll();
            }
            if (s == null) break;
            try {
                s.action().close();
            } catch (Exception | AssertionError e) {
                errors.add(s.what() + ": " + e);
            }
        }
        deleteTree(dir);
        List<String> left = leftovers();
        if (left.isEmpty()) {
            if (!errors.isEmpty()) System.err.println("world " + name("*") + ": cleanup steps failed but nothing is left: " + errors);
            return null;
        }
        AssertionError e = new AssertionError("world " + name("*") + " left behind " + left + (errors.isEmpty() ? "" : "; cleanup errors " + errors));
        if (cause != null) cause.addSuppressed(e);
        return e;
    }

    /** What close() could not remove: this world's namespaces, processes and directory. */
    public final List<String> leftovers() {
        List<String> left = new ArrayList<>();
        synchronized (undo) {
            for (String n : namespaces) if (Files.exists(NETNS_DIR.resolve(n))) left.add("netns " + n);
            for (Process p : processes) if (p.isAlive()) left.add("pid " + p.pid() + " " + p.info().commandLine().orElse(""));
        }
        if (Files.exists(dir)) left.add("directory " + dir);
        return left;
    }

    /**
     * Processes still in namespace {@code name} at close (a server a test started without {@link #start},
     * a daemon a client auto-started) would keep its links and sockets alive after its mount point is
     * gone: they are named on stderr and stopped by pid (SIGTERM, so a daemon removes its socket;
     * SIGKILL for what still runs 10 s later).
     */
    private void killProcessesInside(String name) throws IOException {
        Path mount = NETNS_DIR.resolve(name);
        if (!Files.exists(mount)) return;
        String inode = "net:[" + Files.getAttribute(mount, "unix:ino") + "]";
        long self = ProcessHandle.current().pid();
        List<ProcessHandle> inside = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                long pid = Long.parseLong(p.getFileName().toString());
                try {
                    if (pid == self || !inode.equals(Files.readSymbolicLink(p.resolve("ns/net")).toString())) continue;
                } catch (IOException e) {
                    continue; // gone, or a kernel thread
                }
                System.err.println("world " + name("*") + ": pid " + pid + " still in " + name + " at close, stopped: " + cmdline(p));
                ProcessHandle.of(pid).ifPresent(inside::add);
            }
        }
        for (ProcessHandle h : inside) h.destroy();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle h : inside) {
            try {
                h.onExit().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                h.destroyForcibly();
            }
        }
    }

    private static String cmdline(Path proc) {
        try {
            return new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8).replace('\0', ' ').strip();
        } catch (IOException e) {
            return "?";
        }
    }

    /** Removes {@code root} and all below it (best effort: what stays is named by the leak check). */
    public static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException | UncheckedIOException e) {
            // named by the leak check
        }
    }

    private static String[] concat(List<String> head, String... tail) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(tail));
        return all.toArray(String[]::new);
    }
}
