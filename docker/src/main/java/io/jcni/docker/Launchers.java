package io.jcni.docker;

import io.jcni.common.AtomicFile;
import io.jcni.common.Launcher;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.common.ipam.Delegation;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A directory of jcni plugin launchers put first on the driver's CNI path. The driver runs jcni's
 * plugins in-process anyway; these files are there so that a plugin's own delegation (bridge to its
 * IPAM plugin) finds a jcni executable first and so also stays in-process ({@link Delegation}),
 * whatever else is installed in /opt/cni/bin or /usr/lib/cni. Run directly, they work as the
 * standalone plugins.
 */
final class Launchers {
    private Launchers() {}

    static Path write(Path dir) throws IOException {
        Files.createDirectories(dir);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        for (String type : PluginRegistry.types()) {
            // The same options and text as the installed launchers; no AOT cache: the driver does not know of one.
            String script = Launcher.script(Launcher.Kind.PLUGIN, "jcnid's Docker driver", java, cp,
                    System.getProperty("jcni.native.lib"), null, "io.jcni.plugins.PluginMain " + type);
            AtomicFile.write(dir.resolve(type), script, AtomicFile.EXECUTABLE, AtomicFile.Durability.ATOMIC_ONLY);
        }
        return dir;
    }
}
