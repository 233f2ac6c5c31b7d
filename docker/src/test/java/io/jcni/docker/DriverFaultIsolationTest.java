package io.jcni.docker;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.daemon.DaemonControl;
import io.jcni.daemon.JcnidClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Docker driver that cannot start (its state directory is a regular file) in a real, detached
 * jcnid that also runs the DHCP service: {@code jcnid start} exits 1 naming the driver and the
 * cause, and the plugin fast path and the DHCP service go on serving.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DriverFaultIsolationTest {
    @TempDir
    Path tmp;

    private int control(StringBuilder output, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("--socket", tmp.resolve("run/jcnid.sock").toString(), "--log-file", tmp.resolve("jcnid.log").toString(),
                "--drain-timeout", "5"));
        int rc = DaemonControl.run(a.toArray(String[]::new), ps, ps);
        output.append(out.toString(StandardCharsets.UTF_8));
        return rc;
    }

    @Test
    void aDriverThatCannotStartTakesNeitherTheFastPathNorDhcpDown() throws Exception {
        Path damaged = Files.writeString(tmp.resolve("docker-state"), "not a directory\n");
        Path dhcpSocket = tmp.resolve("run/dhcp.sock");
        Optional<ProcessHandle> jcnid = Optional.empty();
        try {
            StringBuilder o = new StringBuilder();
            int rc = control(o, "start", "--docker-driver", "jtest", "--docker-plugin-dir", tmp.resolve("plugins").toString(),
                    "--docker-state-dir", damaged.toString(), "--dhcp", "--dhcp-socket", dhcpSocket.toString(),
                    "--dhcp-state-dir", tmp.resolve("dhcp").toString());
            jcnid = ProcessHandle.of(Long.parseLong(Files.readString(tmp.resolve("run/jcnid.pid")).trim()));
            assertEquals(1, rc, o.toString());
            // The driver's own words for the cause, which name the damaged path.
            assertTrue(o.toString().matches("(?s).*jcnid: service docker-driver failed: [^\n]*" + java.util.regex.Pattern.quote(damaged.toString()) + ".*"), o.toString());
            assertTrue(jcnid.orElseThrow().isAlive());

            StringBuilder st = new StringBuilder();
            assertEquals(DaemonControl.SERVICE_DOWN, control(st, "status"), st.toString());
            assertTrue(st.toString().contains("\nservices failed 1 of 2\n"), st.toString());
            assertTrue(st.toString().contains("\nservice dhcp running\n"), st.toString());
            assertTrue(st.toString().matches("(?s).*\nservice docker-driver failed: [^\n]*" + java.util.regex.Pattern.quote(damaged.toString()) + ".*"), st.toString());

            // The DHCP service answers on its socket.
            try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(dhcpSocket))) {
                ch.write(ByteBuffer.wrap("{\"op\":\"status\"}\n".getBytes(StandardCharsets.UTF_8)));
                ByteBuffer b = ByteBuffer.allocate(4096);
                while (ch.read(b) > 0 && b.get(b.position() - 1) != '\n') { }
                assertTrue(new String(b.array(), 0, b.position(), StandardCharsets.UTF_8).contains("\"ok\":true"));
            }
            // The plugin fast path serves.
            Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c1", "CNI_NETNS", "/var/run/netns/none",
                    "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent");
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"net1\",\"type\":\"static\","
                    + "\"ipam\":{\"type\":\"static\",\"addresses\":[{\"address\":\"10.1.2.3/24\"}]}}";
            JcnidClient.Reply r = JcnidClient.exec(tmp.resolve("run/jcnid.sock"), "static", env, conf.getBytes(StandardCharsets.UTF_8));
            assertFalse(r.declined());
            assertEquals(0, r.result().exitCode(), r.result().stdoutText());
            assertEquals(0, control(st, "stop"), st.toString());
        } finally {
            jcnid.filter(ProcessHandle::isAlive).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
