package io.jcni.plugins;

import io.jcni.plugins.skel.Background;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.Skel;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

/**
 * The entry point of every jcni plugin executable: {@code PluginMain <type>}. The launcher that a
 * runtime finds on CNI_PATH (e.g. /opt/cni/bin/bridge) passes its own name as the type.
 */
public final class PluginMain {
    private PluginMain() {}

    public static void main(String[] args) throws IOException {
        PrintStream stdout = System.out;
        // Nothing but the CNI answer may reach stdout: anything a library prints goes to stderr.
        System.setOut(System.err);
        if (args.length < 1) {
            System.err.println("usage: PluginMain <plugin type>   (known: " + String.join(", ", PluginRegistry.types()) + ")");
            System.exit(2);
        }
        Supplier<Plugin> plugin = PluginRegistry.lookup(args[0]);
        if (plugin == null) {
            System.err.println("jcni: unknown plugin type '" + args[0] + "'");
            System.exit(2);
        }
        byte[] stdin = "VERSION".equals(System.getenv("CNI_COMMAND")) && System.in.available() == 0
                ? new byte[0] : System.in.readAllBytes();
        // A detached process may delete links after the answer (Background.Detached says why).
        Skel.Outcome out = Skel.run(plugin, System.getenv(), stdin, PluginRegistry.context(System.err, new Background.Detached()));
        stdout.write(out.stdout().getBytes(StandardCharsets.UTF_8));
        stdout.flush();
        System.err.flush();
        // halt, not exit: a plugin registers no shutdown hooks, and since JDK 21 System.exit first
        // starts the System.Logger machinery (to log the exit), ~5 ms of a standalone call.
        Runtime.getRuntime().halt(out.exitCode());
    }
}
