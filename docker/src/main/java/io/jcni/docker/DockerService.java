package io.jcni.docker;

import io.jcni.common.Flags;
import io.jcni.daemon.DaemonService;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The Docker driver as a service of jcnid: {@code jcnid start --docker-driver NAME
 * [--docker-plugin-dir DIR] [--docker-state-dir DIR]}.
 */
public final class DockerService implements DaemonService {
    static final String DRIVER = "--docker-driver";
    static final String PLUGIN_DIR = "--docker-plugin-dir";
    static final String STATE_DIR = "--docker-state-dir";
    public static final Path DEFAULT_PLUGIN_DIR = Path.of("/run/docker/plugins");
    public static final Path DEFAULT_STATE_DIR = Path.of("/var/lib/jcni/docker");
    /** A plugin name is a file name in the plugin directory, and what users type after -d. */
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}");

    @Override
    public String enableFlag() {
        return DRIVER;
    }

    @Override
    public Set<String> valueFlags() {
        return Set.of(DRIVER, PLUGIN_DIR, STATE_DIR);
    }

    @Override
    public Set<String> switchFlags() {
        return Set.of();
    }

    @Override
    public Running start(List<String> args, PrintStream log) throws Exception {
        DockerDriver d = DockerDriver.start(options(args), log);
        return new Running() {
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

    /** The driver's options from its flags (in order, values following their flag). */
    static DockerDriver.Options options(List<String> args) {
        String name = null;
        Path plugins = DEFAULT_PLUGIN_DIR, state = DEFAULT_STATE_DIR;
        Flags f = new Flags(args);
        while (f.next()) {
            switch (f.name()) {
                case DRIVER -> name = f.value();
                case PLUGIN_DIR -> plugins = f.path();
                case STATE_DIR -> state = f.path();
                default -> throw new IllegalArgumentException("unknown Docker driver option " + f.token());
            }
        }
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(DRIVER + ": a plugin name is 1-64 letters, digits, '_', '.' or '-': " + name);
        }
        return DockerDriver.Options.of(name, plugins, state);
    }
}
