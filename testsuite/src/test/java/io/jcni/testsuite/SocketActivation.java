package io.jcni.testsuite;

import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * jcnid.socket without systemd: systemd-socket-activate holds a listening socket and, on the first
 * connection, execs the jcnid launcher with LISTEN_FDS/LISTEN_PID, as systemd does for the unit.
 */
final class SocketActivation {
    private SocketActivation() {}

    /**
     * Activates {@code jcnid} on a socket in {@code dir}, checks that the daemon serves a shim call
     * from {@code bin} and, after SIGTERM, leaves the socket file to its owner.
     *
     * @param wrap a command prefix (e.g. nsenter into a mount namespace); empty for none
     */
    static void check(Path jcnid, Path bin, Path dir, List<String> wrap) throws IOException, InterruptedException {
        Path sock = dir.resolve("act/jcnid.sock");
        Files.createDirectories(sock.getParent());
        Path log = dir.resolve("act.log");
        List<String> cmd = new ArrayList<>(wrap);
        cmd.addAll(List.of("systemd-socket-activate", "-l", sock.toString(), jcnid.toString(), "start", "--foreground",
                "--socket", sock.toString(), "--pid-file", dir.resolve("act/jcnid.pid").toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(sock) && System.nanoTime() < deadline) Thread.sleep(20);
            // The first connection starts the daemon; it is the process systemd-socket-activate exec'd.
            String health = run(wrap, null, null, jcnid.toString(), "status", "--socket", sock.toString()).ok().out();
            long daemon = p.descendants().findFirst().map(ProcessHandle::pid).orElse(p.pid());
            assertTrue(health.contains("pid " + daemon), health);
            Map<String, String> env = new HashMap<>(World.cniEnv("VERSION", "x", "", "eth0", bin.toString()));
            env.put("JCNI_SOCKET", sock.toString());
            run(wrap, env, "{\"cniVersion\":\"1.0.0\",\"name\":\"v\",\"type\":\"static\"}", bin.resolve("static").toString()).ok();
            String metrics = run(wrap, null, null, jcnid.toString(), "metrics", "--socket", sock.toString()).ok().out();
            assertTrue(metrics.contains("jcnid_requests_total{plugin=\"static\",command=\"VERSION\"} 1"), metrics);
            ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroy); // SIGTERM: drain, leave the socket to its owner
            p.waitFor(30, TimeUnit.SECONDS);
            assertTrue(Files.exists(sock), "an activated jcnid does not remove the socket it was given");
            String text = Files.readString(log);
            assertTrue(text.contains("activated=true"), text);
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private static Sh.Run run(List<String> wrap, Map<String, String> env, String stdin, String... cmd) {
        List<String> c = new ArrayList<>(wrap);
        c.addAll(List.of(cmd));
        return Sh.run(env, stdin, 60, c.toArray(String[]::new));
    }
}
