package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** jcnid as a real, detached process: start/status/stop, and kill -9 in the middle of a run of shim calls. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DaemonProcessTest {

    @TempDir
    Path tmp;

    private String[] args(String cmd) {
        return new String[] {cmd, "--socket", tmp.resolve("run/jcnid.sock").toString(), "--log-file",
                tmp.resolve("jcnid.log").toString(), "--drain-timeout", "5"};
    }

    private int control(String cmd, StringBuilder output, String... extra) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        List<String> a = new ArrayList<>(List.of(args(cmd)));
        a.addAll(List.of(extra));
        int rc = DaemonControl.run(a.toArray(String[]::new), ps, ps);
        if (output != null) output.append(out.toString(StandardCharsets.UTF_8));
        return rc;
    }

    private Optional<ProcessHandle> daemon() throws Exception {
        Path pid = tmp.resolve("run/jcnid.pid");
        if (!Files.exists(pid)) return Optional.empty();
        return ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()));
    }

    @Test
    void startStatusKillRestartStop() throws Exception {
        Proc.layout(tmp);
        List<ProcessHandle> started = new ArrayList<>();
        try {
            StringBuilder o = new StringBuilder();
            assertEquals(DaemonControl.NOT_RUNNING, control("status", o));
            assertEquals(0, control("start", o), o.toString());
            started.add(daemon().orElseThrow());
            assertEquals(0, control("start", o), "a second start is a no-op");
            assertTrue(o.toString().contains("already running"), o.toString());
            StringBuilder st = new StringBuilder();
            assertEquals(0, control("status", st));
            assertTrue(st.toString().startsWith("status ok\npid " + started.getFirst().pid() + "\n"), st.toString());

            // A run of ADD/DEL pairs through the shim; the daemon is killed -9 part-way.
            Map<String, String> base = new HashMap<>();
            base.put("JCNI_SOCKET", tmp.resolve("run/jcnid.sock").toString());
            base.put("JCNI_LIBEXEC", tmp.resolve("libexec").toString());
            String expectedAdd = null;
            int servedBefore = 0, addRetries = 0;
            for (int i = 0; i < 12; i++) {
                if (i == 4) {
                    Thread.ofPlatform().start(() -> started.getFirst().destroyForcibly()); // kill -9, racing the next call
                }
                Map<String, String> add = new HashMap<>(base);
                add.putAll(TestDaemon.env("ADD", "ctr" + i));
                Proc.Out a = Proc.run(List.of(tmp.resolve("bin/static").toString()), add, TestDaemon.STATIC_CONF);
                if (a.exit() != 0) {
                    // only the ADD the daemon died in may fail, and only with "try again later"
                    assertEquals(11L, Json.parseObject(a.stdout()).get("code"), a.stdout());
                    addRetries++;
                } else {
                    if (expectedAdd == null) expectedAdd = a.stdout();
                    assertEquals(expectedAdd, a.stdout());
                }
                Map<String, String> del = new HashMap<>(base);
                del.putAll(TestDaemon.env("DEL", "ctr" + i));
                Proc.Out d = Proc.run(List.of(tmp.resolve("bin/static").toString()), del, TestDaemon.STATIC_CONF);
                assertEquals(0, d.exit(), d.stdout() + d.stderr());
                assertEquals("", d.stdout());
                if (i < 4) servedBefore += 2;
            }
            assertTrue(addRetries <= 1);
            assertTrue(started.getFirst().onExit().get(10, TimeUnit.SECONDS) != null);
            assertEquals(DaemonControl.NOT_RUNNING, control("status", null));
            assertTrue(Files.exists(tmp.resolve("run/jcnid.sock")), "kill -9 leaves the socket file behind");

            // A new daemon replaces the stale socket; calls go through it again.
            assertEquals(0, control("start", o), o.toString());
            started.add(daemon().orElseThrow());
            Map<String, String> add = new HashMap<>(base);
            add.putAll(TestDaemon.env("ADD", "after"));
            Proc.Out a = Proc.run(List.of(tmp.resolve("bin/static").toString()), add, TestDaemon.STATIC_CONF);
            assertEquals(expectedAdd, a.stdout());
            String metrics = JcnidClient.metrics(tmp.resolve("run/jcnid.sock"));
            assertTrue(metrics.contains("jcnid_requests_total{plugin=\"static\",command=\"ADD\"} 1\n"), metrics);

            StringBuilder stop = new StringBuilder();
            assertEquals(0, control("stop", stop), stop.toString());
            assertFalse(started.getLast().isAlive());
            assertFalse(Files.exists(tmp.resolve("run/jcnid.sock")));
            assertFalse(Files.exists(tmp.resolve("run/jcnid.pid")));
            assertEquals(DaemonControl.NOT_RUNNING, control("status", null));
            assertEquals(0, control("stop", null), "stopping a stopped daemon is fine");
            String log = Files.readString(tmp.resolve("jcnid.log"));
            assertTrue(log.contains("jcnid stopped"), log);
            assertTrue(log.lines().filter(l -> l.contains("plugin=static")).count() >= servedBefore - 1, log);
        } finally {
            for (ProcessHandle h : started) h.destroyForcibly();
        }
    }

    /**
     * A hosted service that cannot start (here the DHCP service, whose state directory is a regular
     * file) is named by {@code jcnid start}, which exits non-zero, while the daemon keeps serving
     * plugin calls and shows the failure in its status.
     */
    @Test
    void aServiceThatCannotStartIsNamedYetTheFastPathServes() throws Exception {
        Proc.layout(tmp);
        Path notADirectory = Files.writeString(tmp.resolve("dhcp-state"), "a file where a directory belongs\n");
        Optional<ProcessHandle> d = Optional.empty();
        try {
            StringBuilder o = new StringBuilder();
            int rc = control("start", o, "--dhcp", "--dhcp-socket", tmp.resolve("run/dhcp.sock").toString(),
                    "--dhcp-state-dir", notADirectory.toString());
            d = daemon();
            assertEquals(1, rc, o.toString());
            assertTrue(o.toString().contains("jcnid: service dhcp failed: " + notADirectory), o.toString());
            assertTrue(d.isPresent() && d.get().isAlive(), "the daemon keeps running");

            Map<String, String> add = new HashMap<>(TestDaemon.env("ADD", "c1"));
            add.put("JCNI_SOCKET", tmp.resolve("run/jcnid.sock").toString());
            add.put("JCNI_LIBEXEC", tmp.resolve("libexec").toString());
            Proc.Out a = Proc.run(List.of(tmp.resolve("bin/static").toString()), add, TestDaemon.STATIC_CONF);
            assertEquals(0, a.exit(), a.stdout() + a.stderr());
            String metrics = JcnidClient.metrics(tmp.resolve("run/jcnid.sock"));
            assertTrue(metrics.contains("jcnid_requests_total{plugin=\"static\",command=\"ADD\"} 1\n"), "served by jcnid: " + metrics);

            StringBuilder st = new StringBuilder();
            assertEquals(DaemonControl.SERVICE_DOWN, control("status", st), st.toString());
            assertTrue(st.toString().contains("\nservices failed 1 of 1\nservice dhcp failed: " + notADirectory), st.toString());
            assertTrue(st.toString().contains("\njcnid: service dhcp failed: " + notADirectory), "named on stderr too: " + st);
            assertEquals(0, control("stop", null));
        } finally {
            d.ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
