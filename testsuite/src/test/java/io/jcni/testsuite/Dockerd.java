package io.jcni.testsuite;

import io.jcni.testfixtures.World;
import io.jcni.testkit.Sh;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A private dockerd, as the recipe in shared/recipes/real-clients.md runs it: inside the host
 * namespace of a testfixtures {@link World} of its own (entered with nsenter, since {@code ip netns exec}
 * remounts /sys and dockerd then finds no cgroups), with its own data root, exec root, socket and pid
 * file, and a busybox image made from Debian's busybox-static. Debian's /usr/bin/docker (20.10) is the
 * client. {@link #close()} stops it by pid and the world removes all of it, the namespace included.
 */
public final class Dockerd implements AutoCloseable {
    private final World world;
    public final String netns;
    public final Path dir;
    public final Path socket;
    private final Path pidFile;
    private Process process;

    public Dockerd(String netns) throws IOException {
        world = new World("jtd", netns);
        this.netns = netns;
        dir = world.dir;
        socket = dir.resolve("docker.sock");
        pidFile = dir.resolve("docker.pid");
        // dockerd unmounts its overlays when it stops; anything still mounted below dir goes before dir does.
        world.onClose("mounts below " + dir, () -> {
            for (String m : Sh.lines(Sh.run("findmnt", "-rn", "-o", "TARGET").out())) {
                if (m.startsWith(dir.toString())) Sh.quiet("umount", "-l", m);
            }
        });
        try {
            start();
            importBusybox();
        } catch (IOException | RuntimeException | AssertionError e) {
            close(); // the caller never gets this object, so nothing else would remove the namespace and directory
            throw e;
        }
    }

    private void start() throws IOException {
        process = world.start(new ProcessBuilder(World.inNs(netns, List.of("dockerd", "--data-root", dir.resolve("data").toString(),
                "--exec-root", dir.resolve("exec").toString(), "-H", "unix://" + socket, "--pidfile", pidFile.toString())))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("dockerd.log").toFile()))
                .redirectInput(new File("/dev/null")));
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (run("version").rc() != 0) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                throw new AssertionError("dockerd did not start:\n" + Files.readString(dir.resolve("dockerd.log")));
            }
            sleep(200);
        }
    }

    /** Stops dockerd by its pid (SIGTERM: it stops its containers) and starts it again on the same directories. */
    public void restart() throws IOException {
        stop();
        start();
    }

    /**
     * kill -9 of dockerd (the shims and the containers are left as they are), then a start on the same
     * directories. dockerd's own containerd dies with it (its parent-death signal), but not at once: a dockerd
     * started while it is still dying (or not yet reaped) takes it for a running one and times out on its
     * socket, so the start waits until that containerd is dead and removes its pid file.
     */
    public void killAndRestart() throws IOException {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Path pid = dir.resolve("exec/containerd/containerd.pid");
        if (Files.exists(pid)) {
            String p = Files.readString(pid).strip();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (isOurContainerd(p) && System.nanoTime() < deadline) sleep(100);
            if (isOurContainerd(p)) Sh.quiet("kill", "-9", p);
            // A containerd that died with its parent stays a zombie until its new parent reaps it, and dockerd
            // takes a zombie's pid for a running containerd: the stale pid file goes, so it starts a new one.
            Files.deleteIfExists(pid);
        }
        start();
    }

    /** Whether pid is this dockerd's containerd (its command line names this directory; a reused pid does not). */
    private boolean isOurContainerd(String pid) {
        if (!pid.matches("[0-9]+")) return false;
        try {
            return new String(Files.readAllBytes(Path.of("/proc", pid, "cmdline")), java.nio.charset.StandardCharsets.UTF_8).contains(dir.toString());
        } catch (IOException e) {
            return false; // gone
        }
    }

    private void stop() {
        if (process == null) return; // dockerd could not even be started
        ProcessHandle.of(process.pid()).ifPresent(ProcessHandle::destroy);
        try {
            if (!process.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public Sh.Run run(String... args) {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/docker", "-H", "unix://" + socket));
        cmd.addAll(List.of(args));
        return Sh.run(null, null, 180, cmd.toArray(String[]::new));
    }

    public String ok(String... args) {
        return run(args).ok().out().strip();
    }

    /** Runs a command in dockerd's namespace (the "host" of its containers). */
    public Sh.Run inHost(String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        return Sh.run(null, null, 60, c.toArray(String[]::new));
    }

    private void importBusybox() throws IOException {
        Path tar = BusyboxImage.tarball(dir);
        ok("import", "-c", "CMD [\"/bin/sh\"]", tar.toString(), "jcni-bb");
    }

    /** Removes every container and user network, then stops dockerd by its pid and removes its files and namespace. */
    @Override
    public void close() {
        try {
            String ids = run("ps", "-aq").out().strip();
            if (!ids.isEmpty()) {
                List<String> c = new ArrayList<>(List.of("rm", "-f"));
                c.addAll(Sh.lines(ids));
                run(c.toArray(String[]::new));
            }
            for (String n : Sh.lines(run("network", "ls", "-q", "--filter", "type=custom").out())) run("network", "rm", n);
        } catch (AssertionError ignored) {
            // stopping goes on
        }
        stop();
        world.close();
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
