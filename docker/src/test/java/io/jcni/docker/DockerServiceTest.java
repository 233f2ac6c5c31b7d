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
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code jcnid start --docker-driver NAME}: flags, discovery through ServiceLoader, status line. */
@Timeout(60)
class DockerServiceTest {
    @TempDir
    Path tmp;

    @Test
    void flagsReachTheServiceAndRoundTrip() {
        DaemonConfig c = DaemonConfig.parse(List.of("--socket", "/x/j.sock", "--docker-driver", "jcni", "--docker-plugin-dir=/p",
                "--docker-state-dir", "/s"));
        assertEquals(List.of("--docker-driver", "jcni", "--docker-plugin-dir", "/p", "--docker-state-dir", "/s"), c.serviceArgs());
        assertEquals(c, DaemonConfig.parse(c.toArgs()));
        DockerDriver.Options o = DockerService.options(c.serviceArgs());
        assertEquals("jcni", o.name());
        assertEquals(Path.of("/p/jcni.sock"), o.socket());
        assertEquals(Path.of("/s"), o.stateDir());
        assertEquals(Path.of("/run/docker/plugins/x.sock"), DockerService.options(List.of("--docker-driver", "x")).socket());
        assertEquals(Path.of("/var/lib/jcni/docker"), DockerService.options(List.of("--docker-driver", "x")).stateDir());
        assertThrows(IllegalArgumentException.class, () -> DockerService.options(List.of("--docker-driver", "../x")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--docker-driver")));
    }

    @Test
    void theTrainingStartsTheDriverInItsScratchDirectoryAnswersDockersFirstCallsAndStopsIt() throws Exception {
        ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        new DockerService().train(tmp, new PrintStream(logBytes, true, StandardCharsets.UTF_8));
        String log = logBytes.toString(StandardCharsets.UTF_8);
        assertTrue(log.contains("jcnid docker started name=jt socket=" + tmp.resolve("p/jt.sock")), log);
        // Run as root (the tests are), each call reaches the API and is answered without an error.
        assertEquals(5, log.lines().filter(l -> l.contains(" jcnid docker call=")).count(), log);
        assertFalse(log.contains(" err="), log);
        assertFalse(Files.exists(tmp.resolve("p/jt.sock")), "stopped: its socket is gone");
    }

    @Test
    void theServiceIsFoundAndShowsInTheDaemonsHealth() throws Exception {
        List<DaemonService> services = ServiceLoader.load(DaemonService.class).stream().map(ServiceLoader.Provider::get)
                .filter(s -> s.enableFlag().equals("--docker-driver")).toList();
        assertEquals(1, services.size());
        DaemonConfig cfg = DaemonConfig.parse(List.of("--socket", tmp.resolve("run/jcnid.sock").toString()));
        ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
        PrintStream log = new PrintStream(logBytes, true, StandardCharsets.UTF_8);
        JcnidServer server = JcnidServer.start(cfg, PluginRegistry::lookup, log);
        try {
            server.addServices(List.of(services.getFirst().start(List.of("--docker-driver", "jtest", "--docker-plugin-dir",
                    tmp.resolve("plugins").toString(), "--docker-state-dir", tmp.resolve("state").toString()), log)));
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

    @Test
    void aDriverThatCannotServeFailsWithOneClearException() throws Exception {
        List<String> args = List.of("--docker-driver", "jtest", "--docker-plugin-dir", tmp.resolve("plugins").toString(), "--docker-state-dir",
                tmp.resolve("state").toString());
        try (DaemonService.Running first = new DockerService().start(args, null)) {
            DriverStartException e = assertThrows(DriverStartException.class, () -> new DockerService().start(args, null));
            assertTrue(e.getMessage().contains("the Docker driver jtest cannot start") && e.getMessage().contains(tmp.resolve("plugins/jtest.sock").toString())
                    && e.getMessage().contains("another driver is serving"), e.getMessage());
        }
    }
}
