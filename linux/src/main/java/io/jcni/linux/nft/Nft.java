package io.jcni.linux.nft;

import io.jcni.linux.NetlinkSocket;
import io.jcni.linux.Netns;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal nftables client: {@code nft -f -} with a script (one atomic transaction), used to
 * create jcni's tables, chains and rules when they are missing; and {@link #tables()}, nf_tables
 * over netlink for what changes per attachment (set and map elements), so ADD, DEL and CHECK
 * start no process once the structure is in place. Besides nft, {@link #runTool} runs another
 * netfilter program the same way (the firewall plugin's {@code iptables}, whose own tables only
 * iptables may write, so that it can read them back).
 *
 * <p><b>Which namespace, and which thread forks.</b> nft acts on the network namespace it runs in.
 * A forked process, and every thread a thread creates, starts in its creator's namespace (clone(2)
 * copies the calling task's nsproxy). That is a trap for a JVM: starting a process makes the JDK
 * start a "process reaper" thread (and reader threads start carrier threads) from the calling
 * thread when none is idle, and those threads live on (60 s and more) in the caller's namespace,
 * keeping a namespace that was deleted alive: its veths, addresses and nft state stay. So every
 * process is started from one launcher thread that sits in the process's own namespace (the main
 * thread's, {@code /proc/self/ns/net}); when the target namespace is another one, nft is started
 * through {@code nsenter --net=/proc/PID/task/TID/ns/net} of a thread that is in it:
 * <ul>
 *   <li>{@link #in(Netns)}: the namespace's dedicated thread ({@link Netns#run});</li>
 *   <li>{@link #current()}: the calling thread, after checking that it is still in the namespace
 *       it was in when the client was made (by inode), refusing otherwise. This is what a plugin
 *       uses; in a plugin process and in jcnid that is the process's own namespace, so no
 *       {@code nsenter} is involved, which saves an exec per call.</li>
 * </ul>
 */
public final class Nft {
    /** The longest an nft run may take; a transaction takes milliseconds. */
    static final java.time.Duration TIMEOUT = java.time.Duration.ofSeconds(30);

    private static final String NSENTER = "/usr/bin/nsenter";
    private static final List<String> CANDIDATES = List.of("/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft");

    private final Netns ns;
    private final long inode;
    private final String exe;

    private Nft(Netns ns, long inode) {
        this.ns = ns;
        this.inode = inode;
        this.exe = executable();
    }

    /** A client bound to the calling thread's namespace; use it from threads in that namespace. */
    public static Nft current() {
        try (Netns here = Netns.current()) {
            return new Nft(null, here.inode());
        }
    }

    /** A client for {@code ns}: every call runs on the namespace's thread. {@code ns} stays the caller's. */
    public static Nft in(Netns ns) {
        return new Nft(ns, ns.inode());
    }

    /** The inode of the namespace this client acts in: a stable identity for state kept per namespace. */
    public long netnsInode() {
        return inode;
    }

    /** The cookie of the namespace this client acts in (see {@link Netns#currentCookie}). */
    public long netnsCookie() {
        if (ns != null) return ns.run(Netns::currentCookie);
        try (Netns here = Netns.current()) {
            if (here.inode() != inode) throw new IllegalStateException("nft client used from a thread in another network namespace");
        }
        return Netns.currentCookie();
    }

    /**
     * A netlink client for nf_tables in this client's namespace (no nft process). Close it when
     * done. For {@link #in} it is opened on the namespace's thread and closed by {@code close}.
     * For {@link #current} it is one socket per namespace, kept open for the process's life
     * ({@code close} leaves it open): closing a NETLINK_NETFILTER socket right after a
     * transaction that deleted elements waits for the kernel's deferred destruction of that
     * transaction, an RCU grace period (measured 11-18 ms, more than the transaction itself), so
     * a long-lived caller (jcnid) must not pay it per call. An open socket keeps its namespace
     * alive, so only the process's own namespace (where jcnid and a standalone plugin act) gets
     * one kept open; a client of any other namespace opens and closes its own.
     */
    public NfTables tables() {
        // jcnid hands plugins the caller's namespace as a Netns (the caller may be anywhere); when it
        // is the process's own, the shared socket serves, or every call waits for the close below.
        if (ns != null && inode == processNetnsInode()) return shared();
        if (ns != null) return new NfTables(NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER, ns), null);
        try (Netns here = Netns.current()) {
            if (here.inode() != inode) throw new IllegalStateException("nft client used from a thread in another network namespace");
        }
        if (inode != processNetnsInode()) return new NfTables(NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER), null);
        return shared();
    }

    /** The socket kept open for the process's own namespace: opened on the launcher thread, which is in it. */
    private NfTables shared() {
        return SHARED.computeIfAbsent(inode, k -> Launcher.NS.run(() -> new NfTables(NetlinkSocket.open(NetlinkSocket.NETLINK_NETFILTER), this::forget)));
    }

    private static volatile long processNetnsInode;

    /** The namespace of the process's main thread (/proc/self is the thread group leader), which never moves. */
    private static long processNetnsInode() {
        long i = processNetnsInode;
        if (i == 0) {
            try (Netns self = Netns.open("/proc/self/ns/net")) {
                processNetnsInode = i = self.inode();
            }
        }
        return i;
    }

    /** Drops a shared socket that failed below the kernel's answers (timeout, malformed reply). */
    private void forget(NfTables broken) {
        SHARED.remove(inode, broken);
    }

    private static final java.util.concurrent.ConcurrentHashMap<Long, NfTables> SHARED = new java.util.concurrent.ConcurrentHashMap<>();

    /** Runs {@code script} as one transaction: all of it applies, or nothing does. */
    public void run(String script) {
        exec(List.of("-f", "-"), script, "nft -f");
    }

    /** Parses and evaluates {@code script} without applying anything ({@code nft -c}); throws NftException when nft refuses it. */
    public void check(String script) {
        exec(List.of("-c", "-f", "-"), script, "nft -c -f");
    }

    private String exec(List<String> args, String stdin, String op) {
        Run r = spawn(targetNetnsPath(), exe, args, stdin, op);
        if (r.exitCode() != 0) throw new NftException(op, r.exitCode(), r.stderr());
        return r.stdout();
    }

    /** How a program run by {@link #runTool} ended. */
    public record Run(int exitCode, String stdout, String stderr) {}

    /**
     * Runs {@code program} (an absolute path) with {@code args} in this client's namespace, as nft
     * is run (same thread rules, empty environment but PATH, bounded wait), and returns how it
     * ended, whatever its exit status.
     *
     * @throws NftException when it cannot be started or does not finish in time
     */
    public Run runTool(String program, List<String> args) {
        return spawn(targetNetnsPath(), program, args, null, Path.of(program).getFileName() + " " + String.join(" ", args));
    }

    /** Where a process must enter to act in this client's namespace; null: the launcher's own. */
    private String targetNetnsPath() {
        if (ns != null) return inode == processNetnsInode() ? null : ns.run(Nft::threadNetnsPath);
        try (Netns here = Netns.current()) {
            if (here.inode() != inode) {
                throw new IllegalStateException("nft client used from a thread in another network namespace");
            }
        }
        return inode == processNetnsInode() ? null : threadNetnsPath();
    }

    /** The calling thread's namespace as a path another process can open while the thread lives. */
    private static String threadNetnsPath() {
        try {
            return "/proc/" + Files.readSymbolicLink(Path.of("/proc/thread-self")) + "/ns/net";
        } catch (IOException e) {
            throw new NftException("nft", -1, "cannot name this thread's namespace: " + e.getMessage());
        }
    }

    /** The process's own namespace; its one thread starts every process (see the class comment). */
    private static final class Launcher {
        static final Netns NS = Netns.open("/proc/self/ns/net");
    }

    private static final java.util.concurrent.LinkedBlockingQueue<NetlinkSocket> TO_CLOSE = new java.util.concurrent.LinkedBlockingQueue<>();
    private static volatile boolean closerStarted;

    /**
     * Closes {@code nl} on one background thread: a NETLINK_NETFILTER socket's close waits for the
     * kernel to finish the deferred destruction of its last transaction (11-18 ms), which no caller
     * needs to wait for. The thread is started from the launcher, so it sits in no foreign namespace.
     */
    static void closeLater(NetlinkSocket nl) {
        if (!closerStarted) startCloser();
        TO_CLOSE.add(nl);
    }

    private static synchronized void startCloser() {
        if (closerStarted) return;
        Launcher.NS.run(() -> Thread.ofPlatform().name("jcni-nft-closer").daemon().start(() -> {
            while (true) {
                try {
                    TO_CLOSE.take().close();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // a close that fails has nothing left to do
                }
            }
        }));
        closerStarted = true;
    }

    private record Started(Process process, Thread writer, Thread outReader, Thread errReader) {}

    private static Run spawn(String netnsPath, String program, List<String> args, String stdin, String op) {
        List<String> cmd = new ArrayList<>();
        if (netnsPath != null) cmd.addAll(List.of(NSENTER, "--net=" + netnsPath, "--"));
        cmd.add(program);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        // Feed and drain concurrently (a large script or error text cannot block nft or us), and bound
        // the wait: callers hold the nft state lock, so a hung nft must not hold every other caller.
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        Started started;
        try {
            started = Launcher.NS.run(() -> {
                Process p = pb.start();
                Thread writer = Thread.ofVirtual().start(() -> {
                    try (OutputStream in = p.getOutputStream()) {
                        if (stdin != null) in.write(stdin.getBytes(StandardCharsets.UTF_8));
                    } catch (IOException ignored) {
                        // the program exited early; its exit status and stderr say why
                    }
                });
                Thread outReader = Thread.ofVirtual().start(() -> out.append(read(p.getInputStream())));
                Thread errReader = Thread.ofVirtual().start(() -> err.append(read(p.getErrorStream())));
                return new Started(p, writer, outReader, errReader);
            });
        } catch (IOException e) {
            throw new NftException(op, -1, "cannot run " + cmd.get(0) + ": " + e.getMessage());
        }
        Process p = started.process();
        Thread writer = started.writer(), outReader = started.outReader(), errReader = started.errReader();
        try {
            if (!p.waitFor(TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor();
                throw new NftException(op, -1, program + " did not finish within " + TIMEOUT.toSeconds() + " s; killed");
            }
            writer.join();
            outReader.join();
            errReader.join();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new NftException(op, -1, "interrupted");
        }
        return new Run(p.exitValue(), out.toString(), err.toString());
    }

    private static String read(InputStream s) {
        try {
            return new String(s.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String executable() {
        for (String c : CANDIDATES) if (Files.isExecutable(Path.of(c))) return c;
        return "nft";
    }
}
