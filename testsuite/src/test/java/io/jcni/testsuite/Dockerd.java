package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testfixtures.World;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
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
 * client. {@link #startDriver} runs the installed jcnid beside it as its network and IPAM driver.
 * {@link #close()} stops it by pid and the world removes all of it, jcnid and the namespace included.
 */
public final class Dockerd implements AutoCloseable {
    /** dockerd's world: its host namespace, directory and processes (jcnid too, when it is this dockerd's driver). */
    final World world;
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
        Path log = dir.resolve("dockerd.log");
        process = world.start(netns, List.of("dockerd", "--data-root", dir.resolve("data").toString(),
                "--exec-root", dir.resolve("exec").toString(), "-H", "unix://" + socket, "--pidfile", pidFile.toString()), log);
        try {
            Await.until("dockerd answering on " + socket, Duration.ofSeconds(90), () -> {
                if (!process.isAlive()) throw new AssertionError("dockerd exited " + process.exitValue());
                return run("version").rc() == 0;
            });
        } catch (Exception | AssertionError e) {
            throw new AssertionError("dockerd did not start:\n" + Files.readString(log), e);
        }
    }

    /** Where dockerd finds plugin {@code driver}'s socket: the one /run/docker/plugins every dockerd reads (it has no option to look elsewhere), so driver names are unique. */
    static Path pluginSocket(String driver) {
        return Path.of("/run/docker/plugins/" + driver + ".sock");
    }

    /**
     * The installed jcnid as this dockerd's network and IPAM driver {@code driver} ({@code --docker-driver}
     * and {@code options}): in dockerd's namespace, its socket and log ({@code jcnid.log}) in dockerd's
     * directory; ready once the driver answers. It stops when this dockerd closes (after dockerd, so
     * dockerd's own cleanup still reaches it), and its plugin socket, which a killed jcnid leaves behind, goes then.
     */
    JcnidProcess startDriver(Installed jcni, String driver, String... options) throws IOException {
        Path plugin = pluginSocket(driver);
        world.onClose("plugin socket " + plugin, () -> Files.deleteIfExists(plugin));
        List<String> args = new ArrayList<>(List.of("--docker-driver", driver));
        args.addAll(List.of(options));
        JcnidProcess jcnid = JcnidProcess.startInstalled(world, netns, jcni.root.resolve("jcni/bin/jcnid"), dir.resolve("jcnid/jcnid.sock"),
                dir.resolve("jcnid.log"), args.toArray(String[]::new));
        awaitDriver(jcnid, driver);
        return jcnid;
    }

    /** Starts a killed or stopped driver again (same options, log appended) and waits until it answers. */
    static void restartDriver(JcnidProcess jcnid, String driver) throws IOException {
        jcnid.restart();
        awaitDriver(jcnid, driver);
    }

    /** Waits until {@code driver} answers Plugin.Activate as an IPAM driver: the socket file alone says nothing after a kill. */
    private static void awaitDriver(JcnidProcess jcnid, String driver) {
        String plugin = pluginSocket(driver).toString();
        jcnid.awaitReady("driver " + driver + " answering", Duration.ofSeconds(90),
                () -> Sh.run("curl", "-s", "-m", "2", "--unix-socket", plugin, "-X", "POST", "http://x/Plugin.Activate").out().contains("IpamDriver"));
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
            while (isOurContainerd(p) && System.nanoTime() < deadline) Await.pause(100);
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
        try {
            World.stop(process, 60);
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
        return Sh.run(null, null, 60, World.exec(netns, List.of(cmd)).toArray(String[]::new));
    }

    private void importBusybox() throws IOException {
        Path tar = BusyboxImage.tarball(dir);
        ok("import", "-c", "CMD [\"/bin/sh\"]", tar.toString(), "jcni-bb");
    }

    /** Removes every container and user network, then stops dockerd by its pid, and its driver, and removes their files and the namespace. */
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
}
