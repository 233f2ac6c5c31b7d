package io.jcni.docker;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.daemon.DaemonConfig;
import io.jcni.daemon.DaemonService;
import io.jcni.daemon.JcnidServer;
import io.jcni.plugins.PluginRegistry;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code jcnid start --docker-driver NAME}: options, discovery through ServiceLoader, status line. */
@Timeout(60)
class DockerServiceTest {
    @TempDir
    Path tmp;

    @Test
    void optionsParseAndRoundTrip() {
        DaemonConfig c = DaemonConfig.parse(List.of("--socket", "/x/j.sock", "--docker-driver", "jcni", "--docker-plugin-dir", "/p",
                "--docker-state-dir", "/s"));
        assertEquals("jcni", c.dockerDriver());
        assertEquals(Path.of("/p"), c.dockerPluginDir());
        assertEquals(c, DaemonConfig.parse(c.toArgs()));
        DaemonConfig d = DaemonConfig.parse(List.of());
        assertNull(d.dockerDriver());
        assertEquals(Path.of("/run/docker/plugins"), d.dockerPluginDir());
        assertFalse(d.toArgs().contains("--docker-driver"));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--docker-driver", "../x")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--docker-driver")));
    }

    @Test
    void theServiceIsFoundAndShowsInTheDaemonsHealth() throws Exception {
        DaemonConfig cfg = DaemonConfig.parse(List.of("--socket", tmp.resolve("run/jcnid.sock").toString(), "--docker-driver", "jtest",
                "--docker-plugin-dir", tmp.resolve("plugins").toString(), "--docker-state-dir", tmp.resolve("state").toString()));
        List<DaemonService.Provider> providers = ServiceLoader.load(DaemonService.Provider.class).stream().map(ServiceLoader.Provider::get).toList();
        assertEquals(1, providers.size());
        ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);
        assertTrue(providers.getFirst().start(DaemonConfig.parse(List.of("--socket", tmp.resolve("x.sock").toString())), log).isEmpty());
        JcnidServer server = JcnidServer.start(cfg, PluginRegistry::lookup, log);
        try {
            Optional<DaemonService> s = providers.getFirst().start(cfg, log);
            assertTrue(s.isPresent());
            server.addService(s.get());
            assertTrue(Files.exists(tmp.resolve("plugins/jtest.sock")));
            assertTrue(server.health().contains("docker_driver jtest socket " + tmp.resolve("plugins/jtest.sock")
                    + " networks 0 endpoints 0 pools 0\n"), server.health());
            assertTrue(logBytes.toString(StandardCharsets.UTF_8).contains("jcnid docker started name=jtest"));
            assertTrue(Files.isExecutable(tmp.resolve("state/bin/bridge")), "in-process delegation launchers");
        } finally {
            server.shutdown();
        }
        assertFalse(Files.exists(tmp.resolve("plugins/jtest.sock")), "shutdown closes the service");
    }
}
