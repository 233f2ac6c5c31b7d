package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProtocolTest {

    @Test
    void execRoundTrips() throws Exception {
        ByteBuffer b = Protocol.encodeRequest(Protocol.KIND_EXEC,
                new Protocol.Exec("bridge", List.of("A=1", "CNI_COMMAND=ADD", "É=ü"), "{}".getBytes(StandardCharsets.UTF_8)));
        Protocol.Header h = Protocol.parseHeader(b);
        assertEquals(new Protocol.Header(1, Protocol.KIND_EXEC, 0, b.limit() - Protocol.HEADER_BYTES), h);
        Protocol.Exec e = Protocol.parseExec(b.position(Protocol.HEADER_BYTES).slice());
        assertEquals("bridge", e.type());
        assertEquals(List.of("A=1", "CNI_COMMAND=ADD", "É=ü"), e.env());
        assertEquals("{}", new String(e.stdin(), StandardCharsets.UTF_8));
    }

    @Test
    void badMagicIsNoHeader() {
        assertNull(Protocol.parseHeader(ByteBuffer.wrap("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII))));
    }

    @Test
    void lyingLengthsAreRejected() {
        // type length beyond the frame
        assertThrows(Protocol.ProtocolException.class, () -> Protocol.parseExec(ByteBuffer.allocate(8).putInt(100).flip()));
        // an environment count no frame could hold
        ByteBuffer b = ByteBuffer.allocate(12).putInt(0).putInt(Integer.MAX_VALUE).putInt(0).flip();
        assertThrows(Protocol.ProtocolException.class, () -> Protocol.parseExec(b));
        // truncated in the middle of a length
        assertThrows(Protocol.ProtocolException.class, () -> Protocol.parseExec(ByteBuffer.allocate(6).putInt(0).flip().limit(6)));
        // trailing bytes
        ByteBuffer t = ByteBuffer.allocate(13).putInt(0).putInt(0).putInt(0).put((byte) 1).flip();
        assertThrows(Protocol.ProtocolException.class, () -> Protocol.parseExec(t));
    }

    @Test
    void resultRoundTrips() throws Exception {
        ByteBuffer b = Protocol.encodeResult((byte) 0, new Protocol.Result(-3, "out".getBytes(), "err".getBytes()));
        byte[] frame = new byte[b.remaining()];
        b.duplicate().get(frame);
        Protocol.Result r = Protocol.readResult(Channels.newChannel(new ByteArrayInputStream(frame)));
        assertEquals(-3, r.exitCode());
        assertEquals("out", r.stdoutText());
        assertEquals("err", r.stderrText());
    }

    @Test
    void metricsSumPhasesPerPluginAndCommand() {
        Metrics m = new Metrics();
        for (int run = 0; run < 2; run++) {
            io.jcni.plugins.skel.Phases p = new io.jcni.plugins.skel.Phases();
            p.enterAt(io.jcni.plugins.skel.Phases.Phase.PARSE, 0);
            p.enterAt(io.jcni.plugins.skel.Phases.Phase.LINK_DELETE, 1_000_000);
            p.enterAt(null, 21_000_000);
            m.record("bridge", "DEL", 21_000_000, 0, false, p);
        }
        m.record("bridge", "DEL", 5_000_000, 0, false, null); // a timed-out run: no phases
        String text = m.render();
        assertTrue(text.contains("# TYPE jcnid_request_phase_seconds_total counter\n"), text);
        assertTrue(text.contains("jcnid_request_phase_seconds_total{plugin=\"bridge\",command=\"DEL\",phase=\"parse\"} 0.002\n"), text);
        assertTrue(text.contains("jcnid_request_phase_seconds_total{plugin=\"bridge\",command=\"DEL\",phase=\"link_delete\"} 0.04\n"), text);
        assertTrue(text.contains("jcnid_request_phase_seconds_total{plugin=\"bridge\",command=\"DEL\",phase=\"ipam\"} 0\n"), text);
        assertTrue(text.contains("jcnid_requests_total{plugin=\"bridge\",command=\"DEL\"} 3\n"), text);
    }

    @Test
    void metricsRenderAHistogramPerPluginAndCommand() {
        Metrics m = new Metrics();
        m.record("static", "ADD", 700_000, 0, false); // 0.7 ms
        m.record("static", "ADD", 20_000_000, 1, false);
        m.record("bridge", "DEL", 2_000_000_000L, 1, true);
        String t = m.render();
        assertTrue(t.contains("jcnid_requests_total{plugin=\"static\",command=\"ADD\"} 2\n"), t);
        assertTrue(t.contains("jcnid_errors_total{plugin=\"static\",command=\"ADD\"} 1\n"), t);
        assertTrue(t.contains("jcnid_timeouts_total{plugin=\"bridge\",command=\"DEL\"} 1\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_bucket{plugin=\"static\",command=\"ADD\",le=\"0.0005\"} 0\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_bucket{plugin=\"static\",command=\"ADD\",le=\"0.001\"} 1\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_bucket{plugin=\"static\",command=\"ADD\",le=\"0.025\"} 2\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_bucket{plugin=\"static\",command=\"ADD\",le=\"+Inf\"} 2\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_count{plugin=\"bridge\",command=\"DEL\"} 1\n"), t);
        assertTrue(t.contains("jcnid_request_duration_seconds_sum{plugin=\"static\",command=\"ADD\"} 0.0207\n"), t);
        for (String line : t.split("\n")) {
            assertTrue(line.startsWith("#") || line.matches("[a-z_]+(\\{[^}]*})? [0-9.]+"), line);
        }
    }

    @Test
    void configParsesFlagsAndDefaultsThePidFileNextToTheSocket() {
        DaemonConfig c = DaemonConfig.parse(List.of("--socket", "/tmp/x/s.sock", "--request-timeout", "2.5", "--metrics-port", "9105"));
        assertEquals("/tmp/x/jcnid.pid", c.pidFile().toString());
        assertEquals(Duration.ofMillis(2500), c.requestTimeout());
        assertEquals(9105, c.metricsPort());
        assertEquals(c, DaemonConfig.parse(c.toArgs()));
        assertFalse(c.logPhases());
        assertTrue(c.deferLinkDeletion(), "deferred link deletion is the default");
        assertTrue(DaemonConfig.defaults().deferLinkDeletion());
        DaemonConfig phases = DaemonConfig.parse(List.of("--log-phases", "--delete-links-now"));
        assertTrue(phases.logPhases());
        assertFalse(phases.deferLinkDeletion());
        assertEquals(phases, DaemonConfig.parse(phases.toArgs()));
        assertTrue(DaemonConfig.parse(List.of("--defer-link-deletion")).deferLinkDeletion(), "the old flag is still accepted");
        assertEquals("/run/jcni/jcnid.pid", DaemonConfig.defaults().pidFile().toString());
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--request-timeout", "-1")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--socket")));
        assertThrows(IllegalArgumentException.class, () -> DaemonConfig.parse(List.of("--bogus")));
    }

    @Test
    void logValuesAreQuotedOnlyWhenNeeded() {
        assertEquals("abc-1.2", DaemonLog.quote("abc-1.2"));
        assertEquals("\"\"", DaemonLog.quote(""));
        assertEquals("\"a b\\\"c\\n\"", DaemonLog.quote("a b\"c\n"));
    }
}
