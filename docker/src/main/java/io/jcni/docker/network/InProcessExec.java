package io.jcni.docker.network;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.Skel;
import io.jcni.runtime.CniEnvironment;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.ProcessPluginExec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;

/**
 * Runs jcni's own plugins in this process, through the same {@link Skel#run} as the standalone
 * plugins and jcnid, so a Docker Join costs no process start. Other types are looked up on the
 * CNI path and executed as usual.
 */
public final class InProcessExec implements PluginExec {
    /** The pseudo-directory that marks a built-in plugin. */
    private static final Path BUILTIN = Path.of("/jcni-builtin");
    private final PluginExec fallback = new ProcessPluginExec();

    @Override
    public Path find(String type, List<Path> path) {
        if (PluginRegistry.lookup(type) != null) return BUILTIN.resolve(type);
        return PluginExec.findInPath(type, path);
    }

    @Override
    public byte[] run(Path plugin, byte[] stdin, CniEnvironment env) {
        if (!BUILTIN.equals(plugin.getParent())) return fallback.run(plugin, stdin, env);
        String type = plugin.getFileName().toString();
        Supplier<Plugin> p = PluginRegistry.lookup(type);
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Skel.Outcome out = Skel.run(p, env.toMap(), stdin, PluginRegistry.context(new PrintStream(err, true, StandardCharsets.UTF_8)));
        byte[] stdout = out.stdout().getBytes(StandardCharsets.UTF_8);
        if (out.exitCode() == 0) return stdout;
        throw ProcessPluginExec.failure(type, out.exitCode(), stdout, err.toString(StandardCharsets.UTF_8));
    }
}
