package io.jcni.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * jcni installed by its own install script (from the jars this build just made) into a scratch
 * directory, once per test JVM: the plugin executables a runtime finds, and the jcni command.
 */
public final class Installed {
    private static Installed instance;

    public final Path root;
    public final Path bin;
    public final Path jcni;
    /** The socket the installed shims ask first; no daemon listens there unless a test starts one. */
    public final Path socket;

    private Installed(Path root) {
        this.root = root;
        this.bin = root.resolve("bin");
        this.jcni = root.resolve("cmd/jcni");
        this.socket = root.resolve("run/jcnid.sock");
    }

    public static synchronized Installed get() throws IOException {
        if (instance != null) return instance;
        Path repo = Path.of(System.getProperty("jcni.repo", "..")).toAbsolutePath().normalize();
        Path root = Files.createTempDirectory("jcni-installed-");
        Sh.run(null, null, 300, repo.resolve("scripts/install.sh").toString(), "--no-build",
                "--bin-dir", root.resolve("bin").toString(), "--prefix", root.resolve("jcni").toString(),
                "--cmd-dir", root.resolve("cmd").toString(), "--socket", root.resolve("run/jcnid.sock").toString()).ok();
        instance = new Installed(root);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Sh.quiet("rm", "-rf", root.toString())));
        return instance;
    }

    public Path plugin(String type) {
        return bin.resolve(type);
    }
}
