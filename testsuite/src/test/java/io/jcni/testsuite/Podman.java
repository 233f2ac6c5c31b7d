package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A private podman: its own storage (vfs, so nothing stays mounted), run root and containers.conf
 * (CNI backend, plugin dirs and network config dir of the test's choosing), and a busybox image made
 * from Debian's busybox-static. {@link #close()} removes all of it.
 */
public final class Podman implements AutoCloseable {
    public final Path dir;
    public final Path netConfDir;
    private final Map<String, String> env;

    public Podman(List<Path> pluginDirs) throws IOException {
        dir = Files.createTempDirectory("jcni-podman-");
        netConfDir = Files.createDirectories(dir.resolve("net.d"));
        StringBuilder dirs = new StringBuilder();
        for (Path p : pluginDirs) dirs.append(dirs.isEmpty() ? "" : ", ").append('"').append(p).append('"');
        // The settings the recipe found necessary on this machine: ulimits, runc, cgroupfs, file events.
        Files.writeString(dir.resolve("containers.conf"), """
                [containers]
                default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
                [network]
                network_backend = "cni"
                cni_plugin_dirs = [%s]
                network_config_dir = "%s"
                [engine]
                cgroup_manager = "cgroupfs"
                events_logger = "file"
                runtime = "runc"
                """.formatted(dirs, netConfDir));
        env = Map.of("CONTAINERS_CONF", dir.resolve("containers.conf").toString());
        importBusybox();
    }

    /** Runs podman with this instance's storage and config. */
    public Sh.Run run(String... args) {
        String[] cmd = new String[args.length + 7];
        cmd[0] = "podman";
        cmd[1] = "--root";
        cmd[2] = dir.resolve("storage").toString();
        cmd[3] = "--runroot";
        cmd[4] = dir.resolve("run").toString();
        cmd[5] = "--storage-driver";
        cmd[6] = "vfs";
        System.arraycopy(args, 0, cmd, 7, args.length);
        return Sh.run(env, null, 180, cmd);
    }

    public String ok(String... args) {
        return run(args).ok().out().strip();
    }

    private void importBusybox() throws IOException {
        Path tar = BusyboxImage.tarball(dir);
        ok("import", "--change", "CMD [\"/bin/sh\"]", tar.toString(), "localhost/jcni-bb");
    }

    @Override
    public void close() {
        try {
            run("rm", "-af", "-t", "0");
            run("rmi", "-af");
        } catch (AssertionError ignored) {
            // removal below still happens
        }
        Sh.quiet("rm", "-rf", dir.toString());
    }
}
