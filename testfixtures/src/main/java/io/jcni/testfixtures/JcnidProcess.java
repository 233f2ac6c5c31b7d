package io.jcni.testfixtures;

import io.jcni.common.Launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The one harness for a jcnid JVM a test runs: in-tree jcnid ({@code io.jcni.daemon.Jcnid} on the
 * test's class path) with the JVM options jcnid's launcher gives it ({@link Jvm}), or an installed
 * jcnid launcher, in the foreground on the test's own socket and files, inside a namespace of the test's {@link World} (or the test's
 * own), its output appended to a log file (restarts add to it). The world stops it on close if the
 * test did not. Readiness is a file jcnid makes (its socket, a service's socket, subnet.env): when it
 * does not come, or jcnid exits first, the failure carries jcnid's log.
 */
public final class JcnidProcess implements AutoCloseable {
    /** jcnid's main class. */
    public static final String MAIN = "io.jcni.daemon.Jcnid";

    private final World world;
    private final String netns;
    /** How jcnid is run: the in-tree JVM command or an installed launcher, before jcnid's own arguments. */
    private final List<String> jcnid;
    private final List<String> command;
    /** jcnid's socket. */
    public final Path socket;
    /** jcnid's log (stdout and stderr). */
    public final Path log;
    private Process process;

    private JcnidProcess(World world, String netns, List<String> jcnid, Path socket, Path log, String... options) {
        this.world = world;
        this.netns = netns;
        this.jcnid = List.copyOf(jcnid);
        this.socket = socket;
        this.log = log;
        List<String> cmd = new ArrayList<>(jcnid);
        cmd.addAll(List.of("start", "--foreground", "--socket", socket.toString()));
        cmd.addAll(List.of(options));
        this.command = List.copyOf(cmd);
    }

    /**
     * Starts {@code jcnid start --foreground --socket SOCKET OPTIONS...} in {@code netns} (null: the
     * test's own namespace), logging to {@code log}; call {@link #awaitFile} or {@link #awaitReady} for readiness.
     */
    public static JcnidProcess start(World world, String netns, Path socket, Path log, String... options) throws IOException {
        JcnidProcess d = new JcnidProcess(world, netns, Jvm.command(Launcher.Kind.DAEMON, MAIN), socket, log, options);
        d.restart();
        return d;
    }

    /** The same with the installed jcnid launcher {@code launcher} (an installation's {@code jcni/bin/jcnid}). */
    public static JcnidProcess startInstalled(World world, String netns, Path launcher, Path socket, Path log, String... options) throws IOException {
        JcnidProcess d = new JcnidProcess(world, netns, List.of(launcher.toString()), socket, log, options);
        d.restart();
        return d;
    }

    /** Starts jcnid again with the same command, socket and log (after {@link #kill} or {@link #stop}). */
    public void restart() throws IOException {
        if (process != null && process.isAlive()) throw new IllegalStateException("jcnid " + process.pid() + " still runs");
        Files.createDirectories(log.toAbsolutePath().getParent());
        process = world.start(netns, command, log);
    }

    /** Waits until jcnid answers on its socket (the socket file exists). */
    public JcnidProcess awaitReady() {
        return awaitFile(socket, Duration.ofSeconds(60));
    }

    /** Waits until {@code file} exists; fails with jcnid's log when it does not within {@code max} or jcnid exits first. */
    public JcnidProcess awaitFile(Path file, Duration max) {
        return awaitReady(file + " appeared", max, () -> Files.exists(file));
    }

    /**
     * Waits until {@code ready} holds (a service answering, where its socket file says nothing: a
     * killed jcnid's stays behind); fails with jcnid's log when it does not within {@code max} or
     * jcnid exits first.
     */
    public JcnidProcess awaitReady(String what, Duration max, Await.Condition ready) {
        long end = System.nanoTime() + max.toNanos();
        while (!holds(ready)) {
            if (!process.isAlive()) throw new AssertionError("jcnid exited " + process.exitValue() + " before " + what + "\n" + log());
            if (System.nanoTime() > end) throw new AssertionError("not " + what + " after " + max.toSeconds() + " s\n" + log());
            Await.pause(50);
        }
        return this;
    }

    private static boolean holds(Await.Condition ready) {
        try {
            return ready.holds();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** jcnid's pid (of this start). */
    public long pid() {
        return process.pid();
    }

    /** True while this start of jcnid runs. */
    public boolean alive() {
        return process != null && process.isAlive();
    }

    /** What jcnid wrote so far ("" before it wrote anything). */
    public String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return "(" + log + ": " + e + ")";
        }
    }

    /** SIGKILL, as a crash or the OOM killer: no shutdown hook runs; the socket and state stay. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) throw new AssertionError("jcnid " + process.pid() + " survived SIGKILL for 10 s");
    }

    /** SIGTERM, jcnid's clean shutdown (services release what they hold); SIGKILL after 20 s. */
    public void stop() throws InterruptedException {
        World.stop(process, 20);
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null) stop();
    }

    /** The command {@code jcnid ARGS --socket SOCKET} (status, metrics, stop...), run the way this jcnid is. */
    public List<String> control(String... args) {
        List<String> cmd = new ArrayList<>(jcnid);
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("--socket", socket.toString()));
        return cmd;
    }
}
