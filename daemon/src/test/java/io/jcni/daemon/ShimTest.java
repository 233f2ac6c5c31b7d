package io.jcni.daemon;

import static org.junit.jupiter.api.Assertions.*;

import io.jcni.types.Json;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The real C shim against the in-process daemon, fake daemons, and the standalone JVM launcher. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShimTest {

    @TempDir
    Path tmp;

    @BeforeEach
    void layout() throws IOException {
        Proc.layout(tmp);
    }

    static List<Cases.Case> cases() {
        return Cases.all();
    }

    private Map<String, String> env(Map<String, String> cni, Path socket) {
        Map<String, String> env = new HashMap<>(cni);
        env.put("JCNI_SOCKET", socket.toString());
        env.put("JCNI_LIBEXEC", tmp.resolve("libexec").toString());
        return env;
    }

    private Proc.Out shim(Map<String, String> env, String stdin) throws Exception {
        return Proc.run(List.of(tmp.resolve("bin/static").toString()), env, stdin);
    }

    private Proc.Out standalone(Map<String, String> env, String stdin) throws Exception {
        return Proc.run(List.of(tmp.resolve("libexec/static").toString()), env, stdin);
    }

    @ParameterizedTest
    @MethodSource("cases")
    void shimAndDaemonMatchTheStandalonePlugin(Cases.Case c) throws Exception {
        try (TestDaemon d = new TestDaemon(tmp.resolve("d"))) {
            Map<String, String> env = env(c.env(), d.socket());
            Proc.Out viaDaemon = shim(env, c.stdin());
            Proc.Out direct = standalone(env, c.stdin());
            assertEquals(direct.stdout(), viaDaemon.stdout());
            assertEquals(direct.exit(), viaDaemon.exit());
            assertEquals(1, d.log().lines().filter(l -> l.contains("plugin=static")).count(), "the daemon did not serve it");
        }
    }

    @Test
    void withoutADaemonTheShimRunsTheStandalonePlugin() throws Exception {
        Cases.Case c = Cases.all().getFirst();
        Map<String, String> env = env(c.env(), tmp.resolve("no-such.sock"));
        Proc.Out out = shim(env, c.stdin());
        assertEquals(0, out.exit(), out.stderr());
        assertEquals(standalone(env, c.stdin()).stdout(), out.stdout());
        assertTrue(out.stdout().contains("\"10.1.2.3/24\""));
    }

    @Test
    void aDeclinedRequestRunsStandaloneWithTheSameStdin() throws Exception {
        // a daemon that knows no plugin declines everything, after the shim has consumed stdin
        try (TestDaemon d = new TestDaemon(tmp.resolve("d"), Duration.ofSeconds(5), 8, t -> null)) {
            Cases.Case c = Cases.all().getFirst();
            Proc.Out out = shim(env(c.env(), d.socket()), c.stdin());
            assertEquals(0, out.exit(), out.stderr());
            assertEquals(standalone(env(c.env(), d.socket()), c.stdin()).stdout(), out.stdout());
            assertTrue(d.log().contains("declined=\"unknown plugin type static\""), d.log());
        }
    }

    /** A daemon that dies before accepting: nothing ran, so even ADD runs standalone. */
    @Test
    void aDaemonLostBeforeAcceptingFallsBack() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        Thread fake = fakeDaemon(sock, 2, false);
        for (String cmd : List.of("ADD", "DEL")) {
            Proc.Out out = shim(env(TestDaemon.env(cmd, "c1"), sock), TestDaemon.STATIC_CONF);
            assertEquals(0, out.exit(), cmd + ": " + out.stdout() + out.stderr());
        }
        fake.join(10_000);
    }

    /** A daemon lost after accepting: ADD may have partly run, so it is answered "try again later"; DEL reruns. */
    @Test
    void aDaemonLostAfterAcceptingFailsAddButRerunsIdempotentCommands() throws Exception {
        Path sock = tmp.resolve("fake.sock");
        Thread fake = fakeDaemon(sock, 3, true);
        Proc.Out add = shim(env(TestDaemon.env("ADD", "c1"), sock), TestDaemon.STATIC_CONF);
        assertEquals(1, add.exit());
        Map<String, Object> err = Json.parseObject(add.stdout());
        assertEquals(11L, err.get("code"));
        assertEquals("1.0.0", err.get("cniVersion"));
        Proc.Out del = shim(env(TestDaemon.env("DEL", "c1"), sock), TestDaemon.STATIC_CONF);
        assertEquals(0, del.exit(), del.stdout() + del.stderr());
        assertEquals("", del.stdout());
        Proc.Out version = shim(env(Map.of("CNI_COMMAND", "VERSION"), sock), "");
        assertEquals(0, version.exit());
        assertTrue(Json.parseObject(version.stdout()).containsKey("supportedVersions"));
        fake.join(10_000);
    }

    @Test
    void aMissingStandalonePluginIsACniError() throws Exception {
        Map<String, String> env = env(TestDaemon.env("ADD", "c1"), tmp.resolve("no-such.sock"));
        env.put("JCNI_LIBEXEC", tmp.resolve("nowhere").toString());
        Proc.Out out = shim(env, TestDaemon.STATIC_CONF);
        assertEquals(1, out.exit());
        Map<String, Object> err = Json.parseObject(out.stdout());
        assertEquals(50L, err.get("code"));
        assertTrue(((String) err.get("details")).contains("nowhere/static"), out.stdout());

        env.put("JCNI_LIBEXEC", tmp.resolve("bin").toString()); // the shim itself: no exec loop
        Proc.Out self = shim(env, TestDaemon.STATIC_CONF);
        assertEquals(50L, Json.parseObject(self.stdout()).get("code"));
        assertTrue(self.stdout().contains("is the shim itself"), self.stdout());
    }

    /** Serves n connections: reads a whole request, then either closes at once or after an 'A'. */
    private static Thread fakeDaemon(Path sock, int n, boolean accept) throws IOException {
        ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        s.bind(UnixDomainSocketAddress.of(sock));
        return Thread.ofPlatform().daemon().start(() -> {
            try (s) {
                for (int i = 0; i < n; i++) {
                    try (SocketChannel ch = s.accept()) {
                        ByteBuffer head = Protocol.readExactly(ch, Protocol.HEADER_BYTES);
                        Protocol.readExactly(ch, head.getInt(8));
                        if (accept) Protocol.writeFully(ch, ByteBuffer.wrap(new byte[] {Protocol.STATUS_ACCEPTED}));
                    }
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
    }
}
