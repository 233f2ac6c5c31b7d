package io.jcni.daemon;

import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.Training;
import io.jcni.plugins.skel.Skel;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The training run for jcnid's own AOT cache ({@code jcni-aot} runs it with the daemon's JVM flags
 * and {@code -XX:AOTCacheOutput}), so a freshly started daemon, socket-activated by the first
 * plugin call of a boot, serves at full speed: the plugin workloads in-process (as
 * {@link Training} does for the standalone plugins), then the same again through a daemon on a
 * scratch socket, which trains the accept, protocol and dispatch paths; then each hosted service
 * that has a training ({@link DaemonService#train}: the Docker driver's Jetty start and calls).
 */
public final class DaemonTraining {
    private DaemonTraining() {}

    /** Each hosted service on the classpath, in its own scratch directory; one that fails is skipped, saying so. */
    static void trainServices(Path scratch, PrintStream err) {
        for (DaemonService s : DaemonServices.available()) {
            try {
                s.train(Files.createDirectories(scratch.resolve(HostedServices.name(s))), err);
            } catch (Exception | LinkageError e) {
                err.println("jcnid training: service " + HostedServices.name(s) + " skipped: " + HostedServices.causeOf(e));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream err = System.err;
        System.setOut(err);
        Training.train(null, true, err);
        Path dir = Files.createTempDirectory("jcnid-training-");
        try {
            Path socket = dir.resolve("run/jcnid.sock");
            DaemonConfig cfg = DaemonConfig.parse(List.of("--socket", socket.toString()));
            PrintStream quiet = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
            // Serve whoever runs the training (root in a package's postinst, anyone in a scratch install).
            String me = String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
            JcnidServer server = JcnidServer.start(cfg, PluginRegistry::lookup, quiet,
                    FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(me));
            try {
                Training.train((type, env, stdin) -> {
                    JcnidClient.Reply r = JcnidClient.exec(socket, type, env, stdin);
                    if (r.declined()) throw new IllegalStateException("jcnid declined " + type);
                    return new Skel.Outcome(r.result().stdoutText(), r.result().exitCode());
                }, false, err);
                JcnidClient.health(socket);
                JcnidClient.metrics(socket);
            } finally {
                server.shutdown();
            }
            trainServices(dir.resolve("services"), err);
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }
}
