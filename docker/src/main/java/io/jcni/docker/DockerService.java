package io.jcni.docker;

import io.jcni.daemon.DaemonService;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Runs the Docker driver inside jcnid when it is started with {@code --docker-driver NAME}
 * ({@code --docker-plugin-dir DIR}, {@code --docker-state-dir DIR} optional).
 */
public final class DockerService implements DaemonService {
    static final Path DEFAULT_PLUGIN_DIR = Path.of("/run/docker/plugins");
    static final Path DEFAULT_STATE_DIR = Path.of("/var/lib/jcni/docker");

    @Override
    public String enableFlag() {
        return "--docker-driver";
    }

    @Override
    public Set<String> valueFlags() {
        return Set.of("--docker-driver", "--docker-plugin-dir", "--docker-state-dir");
    }

    @Override
    public Set<String> switchFlags() {
        return Set.of();
    }

    @Override
    public DaemonService.Running start(List<String> args, PrintStream log) throws IOException {
        DockerDriver d = DockerDriver.start(options(args), log);
        return new DaemonService.Running() {
            @Override
            public String status() {
                return d.status();
            }

            @Override
            public void close() {
                d.close();
            }
        };
    }

    /** The driver's options from its flags (each followed by its value, as jcnid hands them over). */
    static DockerDriver.Options options(List<String> args) {
        String name = null;
        Path pluginDir = DEFAULT_PLUGIN_DIR, stateDir = DEFAULT_STATE_DIR;
        List<String> rest = new ArrayList<>(args);
        while (!rest.isEmpty()) {
            String flag = rest.removeFirst();
            if (rest.isEmpty()) throw new IllegalArgumentException(flag + " needs a value");
            String v = rest.removeFirst();
            switch (flag) {
                case "--docker-driver" -> name = driverName(flag, v);
                case "--docker-plugin-dir" -> pluginDir = Path.of(v);
                case "--docker-state-dir" -> stateDir = Path.of(v);
                default -> throw new IllegalArgumentException("unknown option " + flag);
            }
        }
        if (name == null) throw new IllegalArgumentException("--docker-driver NAME is required");
        return DockerDriver.Options.of(name, pluginDir, stateDir);
    }

    /** A plugin name is a file name in the plugin directory, and what users type after -d. */
    private static String driverName(String flag, String v) {
        if (!v.matches("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}")) {
            throw new IllegalArgumentException(flag + ": a plugin name is 1-64 letters, digits, '_', '.' or '-': " + v);
        }
        return v;
    }
}
