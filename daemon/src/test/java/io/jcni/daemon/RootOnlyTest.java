package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.plugins.PluginRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Only root is served: the 0700 directory keeps others out, and SO_PEERCRED turns away those who get in. */
@Tag("root")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RootOnlyTest {

    @TempDir
    Path tmp;

    @Test
    void nobodyCannotUseTheDaemon() throws Exception {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.createDirectories(tmp.resolve("bin"));
        Files.createDirectories(tmp.resolve("libexec"));
        Files.copy(Proc.shim(), tmp.resolve("bin/static"));
        Proc.script(tmp.resolve("libexec/static"), "echo FALLBACK\n");
        DaemonConfig cfg = new DaemonConfig(tmp.resolve("run/jcnid.sock"), tmp.resolve("run/jcnid.pid"), null,
                Duration.ofSeconds(5), Duration.ofSeconds(1), 8, 0, true, java.util.List.of());
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        JcnidServer server = JcnidServer.start(cfg, PluginRegistry::lookup, new PrintStream(log, true, StandardCharsets.UTF_8));
        try {
            Map<String, String> env = new HashMap<>(TestDaemon.env("ADD", "c1"));
            env.put("JCNI_SOCKET", cfg.socket().toString());
            env.put("JCNI_LIBEXEC", tmp.resolve("libexec").toString());
            List<String> asNobody = List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                    tmp.resolve("bin/static").toString());

            // root is served
            Proc.Out root = Proc.run(List.of(tmp.resolve("bin/static").toString()), env, TestDaemon.STATIC_CONF);
            assertEquals(0, root.exit(), root.stdout() + root.stderr());
            assertTrue(root.stdout().contains("10.1.2.3/24"));

            // nobody cannot even reach the socket (0700 directory): the shim falls back
            Proc.Out denied = Proc.run(asNobody, env, TestDaemon.STATIC_CONF);
            assertEquals("FALLBACK\n", denied.stdout(), denied.stderr());
            assertEquals(0, server.metrics().rejectedPeers.get());

            // with the file modes opened up, SO_PEERCRED still turns nobody away
            Files.setPosixFilePermissions(cfg.socket().getParent(), PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(cfg.socket(), PosixFilePermissions.fromString("rw-rw-rw-"));
            Proc.Out rejected = Proc.run(asNobody, env, TestDaemon.STATIC_CONF);
            assertEquals("FALLBACK\n", rejected.stdout(), rejected.stderr());
            assertEquals(1, server.metrics().rejectedPeers.get());
            assertEquals(1, server.metrics().totalRequests(), "only root's request ran");
            assertTrue(log.toString(StandardCharsets.UTF_8).contains("rejected_peer=nobody"), log.toString(StandardCharsets.UTF_8));
        } finally {
            server.shutdown();
        }
    }
}
