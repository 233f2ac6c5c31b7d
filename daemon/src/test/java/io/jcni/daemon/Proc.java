package io.jcni.daemon;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

/** Runs an executable the way a CNI runtime does: a given environment, stdin, captured stdout/stderr, bounded time. */
final class Proc {
    private Proc() {}

    record Out(String stdout, String stderr, int exit) {}

    /** The shim the Maven build compiled (the working directory of surefire is the module). */
    static Path shim() {
        Path p = Path.of("target/native/jcni-shim").toAbsolutePath();
        if (!Files.isExecutable(p)) throw new IllegalStateException(p + " missing: the antrun build-shim step did not run");
        return p;
    }

    /** dir/bin/static (the shim) and dir/libexec/static (the standalone launcher of this test JVM's classes). */
    static void layout(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("bin"));
        Files.createDirectories(dir.resolve("libexec"));
        Files.copy(shim(), dir.resolve("bin/static"));
        Jvm.launcher(dir.resolve("libexec/static"), Launcher.Kind.PLUGIN, "the daemon tests", "io.jcni.plugins.PluginMain static");
    }

    static void script(Path p, String body) throws IOException {
        Files.writeString(p, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    static Out run(List<String> cmd, Map<String, String> env, String stdin) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.environment().putIfAbsent("JCNI_AUTOSTART", "0"); // a shim with no daemon falls back; it starts none
        io.jcni.testfixtures.Proc.Out o = io.jcni.testfixtures.Proc.run(pb, stdin, 30);
        return new Out(o.out(), o.err(), o.rc());
    }
}
