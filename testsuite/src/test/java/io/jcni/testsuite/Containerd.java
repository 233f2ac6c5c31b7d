package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.World;
import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Debian's containerd 1.6 for one test, as /work/shared/recipes/real-clients.md runs it: inside the
 * host namespace of the test's {@link World} (nsenter, not ip netns exec, which remounts /sys), with its own
 * root, state and socket under a scratch directory, and only the plugins {@code ctr} needs (no CRI).
 * {@link #close()} stops every task it started, then containerd by its pid (the world would, too).
 */
final class Containerd implements AutoCloseable {
    final Path dir;
    final Path socket;
    final String namespace = "jcni-test";
    private final Process process;
    private final List<String> containers = new ArrayList<>();

    Containerd(World world, Path dir) throws Exception {
        this.dir = dir;
        this.socket = dir.resolve("containerd.sock");
        Files.createDirectories(dir);
        Path config = dir.resolve("config.toml");
        Files.writeString(config, """
                version = 2
                root = "%s"
                state = "%s"
                disabled_plugins = ["io.containerd.grpc.v1.cri"]
                [grpc]
                  address = "%s"
                """.formatted(dir.resolve("root"), dir.resolve("state"), socket));
        process = world.start(world.host, List.of("containerd", "--config", config.toString()), dir.resolve("containerd.log"));
        try {
            Await.until("containerd's socket " + socket, Duration.ofSeconds(15), () -> Files.exists(socket));
        } catch (AssertionError e) {
            throw new AssertionError("containerd did not start: " + logs(), e);
        }
    }

    Sh.Run ctr(long timeoutSeconds, String... args) {
        List<String> cmd = new ArrayList<>(List.of("ctr", "-a", socket.toString(), "-n", namespace));
        cmd.addAll(List.of(args));
        return Sh.run(null, null, timeoutSeconds, cmd.toArray(String[]::new));
    }

    /** {@code ctr run [-d|--rm] OPTIONS IMAGE ID CMD...}; detached containers are stopped by close(). */
    Sh.Run run(boolean detach, List<String> options, String image, String id, String... cmd) {
        List<String> args = new ArrayList<>(List.of("run", detach ? "-d" : "--rm"));
        args.addAll(options);
        args.add(image);
        args.add(id);
        args.addAll(List.of(cmd));
        if (detach) containers.add(id);
        return ctr(180, args.toArray(String[]::new));
    }

    static String bind(Path src, String dst, boolean rw) {
        return "type=bind,src=" + src + ",dst=" + dst + ",options=rbind:" + (rw ? "rw" : "ro");
    }

    /** Stops a detached container (SIGTERM, then SIGKILL after 20 s) and removes it. */
    void stop(String id) throws InterruptedException {
        ctr(30, "tasks", "kill", id);
        for (int i = 0; i < 200 && ctr(30, "tasks", "ls").out().lines().anyMatch(l -> l.startsWith(id + " ") && l.contains("RUNNING")); i++) {
            Await.pause(100);
        }
        ctr(30, "tasks", "kill", "-s", "SIGKILL", id);
        ctr(30, "tasks", "delete", id);
        ctr(30, "containers", "delete", id);
        containers.remove(id);
    }

    String logs() {
        try {
            return Files.readString(dir.resolve("containerd.log"));
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        for (String id : new ArrayList<>(containers)) {
            try {
                stop(id);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            World.stop(process, 10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // The shims' and snapshots' mounts live under state and root: unmount before removing.
        Sh.quiet("sh", "-c", "grep -o ' " + dir + "[^ ]*' /proc/self/mounts | sort -r | xargs -r -n1 umount -l");
        Sh.quiet("rm", "-rf", dir.toString());
    }
}
