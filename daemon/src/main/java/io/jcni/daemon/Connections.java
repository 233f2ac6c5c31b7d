package io.jcni.daemon;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The plugin socket's connections: accepts them, one virtual thread each, checks the peer, reads
 * the {@link Protocol} frame within {@link #IO_TIMEOUT}, and answers HEALTH and METRICS itself
 * while EXEC goes to the {@link RequestRunner}.
 */
final class Connections {
    /** How long a client may take to send its request, or to take the answer. */
    static final Duration IO_TIMEOUT = Duration.ofSeconds(10);

    private final ServerSocketChannel server;
    /** The only user whose connections are served: root (uid 0). */
    private final UserPrincipal peer;
    private final DaemonConfig cfg;
    private final RequestRunner runner;
    private final Metrics metrics;
    private final DaemonLog log;
    private final Supplier<String> health;
    private final Supplier<String> renderMetrics;
    private final BooleanSupplier shuttingDown;
    private final AtomicInteger open = new AtomicInteger();
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("jcnid-watchdog").daemon().factory());
    private Thread acceptor;

    Connections(ServerSocketChannel server, UserPrincipal peer, DaemonConfig cfg, RequestRunner runner, Metrics metrics,
            DaemonLog log, Supplier<String> health, Supplier<String> renderMetrics, BooleanSupplier shuttingDown) {
        this.server = server;
        this.peer = peer;
        this.cfg = cfg;
        this.runner = runner;
        this.metrics = metrics;
        this.log = log;
        this.health = health;
        this.renderMetrics = renderMetrics;
        this.shuttingDown = shuttingDown;
    }

    /** Connections being served now (the drain waits for them). */
    int open() {
        return open.get();
    }

    void start() {
        acceptor = Thread.ofPlatform().name("jcnid-accept").start(this::acceptLoop);
    }

    /** Closes the listening socket and waits up to 2 s for the acceptor to end; open connections go on. */
    void stopAccepting() {
        closeQuietly(server);
        if (acceptor == null) return;
        try {
            acceptor.join(Duration.ofSeconds(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void shutdown() {
        watchdog.shutdownNow();
    }

    private void acceptLoop() {
        while (!shuttingDown.getAsBoolean()) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException e) {
                break;
            } catch (IOException e) {
                if (shuttingDown.getAsBoolean()) break;
                log.line("jcnid error=\"accept: " + e.getMessage() + "\"");
                sleep(10);
                continue;
            }
            open.incrementAndGet();
            Thread.ofVirtual().name("jcnid-conn").start(() -> {
                try (ch) {
                    serve(ch);
                } catch (IOException | RuntimeException e) {
                    if (!(e instanceof ClosedChannelException)) log.line("jcnid connection_error=" + DaemonLog.quote(String.valueOf(e)));
                } finally {
                    open.decrementAndGet();
                }
            });
        }
    }

    private void serve(SocketChannel ch) throws IOException {
        UnixDomainPrincipal cred = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
        if (!peer.equals(cred.user())) {
            metrics.rejectedPeers.incrementAndGet();
            log.line("jcnid rejected_peer=" + DaemonLog.quote(cred.user().getName()));
            return;
        }
        int inFlight = metrics.inFlight.incrementAndGet();
        try {
            Frame f = readFrame(ch);
            if (f == null) return;
            switch (f.header().kind()) {
                case Protocol.KIND_HEALTH -> reply(ch, Protocol.STATUS_RESULT, text(health.get()));
                case Protocol.KIND_METRICS -> reply(ch, Protocol.STATUS_RESULT, text(renderMetrics.get()));
                // Declined only once read, so the client gets its 'F' rather than a broken pipe.
                case Protocol.KIND_EXEC -> {
                    if (inFlight > cfg.maxInFlight()) decline(ch, "busy");
                    else exec(ch, f.body());
                }
                default -> {
                    protocolError("unknown kind " + f.header().kind());
                    malformed(ch, "unknown request kind", Integer.toString(f.header().kind()));
                }
            }
        } finally {
            metrics.inFlight.decrementAndGet();
        }
    }

    /** A request as read: its header and whole body. */
    private record Frame(Protocol.Header header, ByteBuffer body) {}

    /** Reads one frame within the I/O timeout; null when it was answered (or closed on) already. */
    private Frame readFrame(SocketChannel ch) throws IOException {
        ScheduledFuture<?> dog = watchdog.schedule(() -> closeQuietly(ch), IO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            ByteBuffer head = ByteBuffer.allocate(Protocol.HEADER_BYTES);
            while (head.hasRemaining()) {
                if (ch.read(head) < 0) {
                    protocolError("truncated header (" + head.position() + " bytes)");
                    return null; // nothing parseable: a clean close
                }
            }
            Protocol.Header h = Protocol.parseHeader(head);
            if (h == null) {
                protocolError("bad magic");
                return null;
            }
            if (h.version() != Protocol.VERSION) {
                decline(ch, "protocol version " + h.version());
                return null;
            }
            if (h.bodyLength() < 0 || h.bodyLength() > Protocol.MAX_BODY) {
                String size = Integer.toUnsignedString(h.bodyLength());
                protocolError("body of " + size + " bytes is too large");
                malformed(ch, "request too large", "body of " + size + " bytes exceeds " + Protocol.MAX_BODY);
                return null;
            }
            ByteBuffer body = ByteBuffer.allocate(h.bodyLength());
            while (body.hasRemaining()) {
                if (ch.read(body) < 0) {
                    protocolError("truncated body");
                    malformed(ch, "truncated request", "got " + body.position() + " of " + h.bodyLength() + " bytes");
                    return null;
                }
            }
            return new Frame(h, body.flip());
        } finally {
            dog.cancel(false);
        }
    }

    private void exec(SocketChannel ch, ByteBuffer body) throws IOException {
        Protocol.Exec ex;
        try {
            ex = Protocol.parseExec(body);
        } catch (Protocol.ProtocolException e) {
            protocolError(e.getMessage());
            malformed(ch, "malformed request", e.getMessage());
            return;
        }
        runner.run(ex, new RequestRunner.Exchange() {
            @Override
            public void decline(String why) {
                Connections.this.decline(ch, why);
            }

            @Override
            public void accept() throws IOException {
                Protocol.writeFully(ch, ByteBuffer.wrap(new byte[] {Protocol.STATUS_ACCEPTED}));
            }

            @Override
            public void answer(Protocol.Result result) throws IOException {
                reply(ch, (byte) 0, result);
            }
        });
    }

    private void malformed(SocketChannel ch, String msg, String details) {
        var o = ExecRequest.errorOutcome("", new CniException(ErrorCode.DECODING_FAILURE, "jcnid: " + msg, details));
        try {
            reply(ch, Protocol.STATUS_RESULT, new Protocol.Result(o.exitCode(), o.stdout().getBytes(StandardCharsets.UTF_8), new byte[0]));
        } catch (IOException e) {
            // the peer is gone; nothing to tell
        }
    }

    private void decline(SocketChannel ch, String why) {
        metrics.declined.incrementAndGet();
        log.line("jcnid declined=" + DaemonLog.quote(why));
        try {
            Protocol.writeFully(ch, ByteBuffer.wrap(new byte[] {Protocol.STATUS_FALLBACK}));
        } catch (IOException ignored) {
            // the client falls back either way
        }
    }

    private void reply(SocketChannel ch, byte status, Protocol.Result r) throws IOException {
        ScheduledFuture<?> dog = watchdog.schedule(() -> closeQuietly(ch), IO_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        try {
            Protocol.writeFully(ch, Protocol.encodeResult(status, r));
        } finally {
            dog.cancel(false);
        }
    }

    private void protocolError(String what) {
        metrics.protocolErrors.incrementAndGet();
        log.line("jcnid protocol_error=" + DaemonLog.quote(what));
    }

    private static Protocol.Result text(String s) {
        return new Protocol.Result(0, s.getBytes(StandardCharsets.UTF_8), new byte[0]);
    }

    static void closeQuietly(Closeable c) {
        try {
            if (c != null) c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
