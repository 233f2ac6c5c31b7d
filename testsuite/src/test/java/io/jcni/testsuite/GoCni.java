package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * containerd's go-cni library as containerd 1.6's CRI calls it: {@code src/test/go/gocni/main.go},
 * built once per test JVM in GOPATH mode on Debian's golang-github-containerd-go-cni-dev sources
 * (no Go module proxy here), then run inside a test's host namespace.
 */
public final class GoCni {
    static final Path GOCODE = Path.of("/usr/share/gocode");
    private static GoCni instance;

    public final Path binary;

    private GoCni(Path binary) {
        this.binary = binary;
    }

    /** Whether the Go toolchain and the go-cni sources are installed (scripts/env.sh's test packages). */
    public static boolean available() {
        return Files.isDirectory(GOCODE.resolve("src/github.com/containerd/go-cni"))
                && Sh.run("sh", "-c", "command -v go").rc() == 0;
    }

    public static synchronized GoCni get() throws IOException {
        if (instance != null) return instance;
        Path repo = Path.of(System.getProperty("jcni.repo", "..")).toAbsolutePath().normalize();
        Path work = Files.createTempDirectory("jcni-gocni-");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> Sh.quiet("rm", "-rf", work.toString())));
        Path pkg = work.resolve("gopath/src/jcni/gocni");
        Files.createDirectories(pkg);
        Files.copy(repo.resolve("testsuite/src/test/go/gocni/main.go"), pkg.resolve("main.go"));
        Path binary = work.resolve("gocni-run");
        Map<String, String> env = Map.of("GOPATH", work.resolve("gopath") + ":" + GOCODE, "GO111MODULE", "off",
                "GOCACHE", work.resolve("gocache").toString(), "GOFLAGS", "", "CGO_ENABLED", "0");
        Sh.run(env, null, 600, "sh", "-c", "cd '" + pkg + "' && go build -o '" + binary + "' .").ok();
        instance = new GoCni(binary);
        return instance;
    }

    /**
     * Runs {@code setup} or {@code remove} for the pods {@code id=netnsPath} (concurrently, through
     * one go-cni instance) inside the world's host namespace.
     */
    public Sh.Run run(World w, Path confDir, Path binDir, List<String> flags, String command, List<String> pods) {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "-confdir", confDir.toString(), "-bindir", binDir.toString()));
        cmd.addAll(flags);
        cmd.add(command);
        cmd.addAll(pods);
        return w.inHost(null, null, cmd.toArray(String[]::new));
    }
}
