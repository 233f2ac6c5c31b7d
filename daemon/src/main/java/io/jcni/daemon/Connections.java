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
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

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
    /** Complete requests being handled (what {@code --max-in-flight} bounds). */
    private final AtomicInteger requests = new AtomicInteger();
    /** What all connections may hold at once of request bodies and answers. */
    private final ByteBudget budget;
    private final Deadlines deadlines = new Deadlines("jcnid-deadlines");
    private Thread acceptor;

    Connections(ServerSocketChannel server, UserPrincipal peer, DaemonConfig cfg, RequestRunner runner, Metrics metrics,
            DaemonLog log, Supplier<String> health, Supplier<String> renderMetrics, BooleanSupplier shuttingDown, ByteBudget budget) {
        this.server = server;
        this.budget = budget;
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
        deadlines.close();
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
        Optional<String> refused = PeerCredentials.refused(ch, peer);
        if (refused.isPresent()) {
            metrics.rejectedPeers.incrementAndGet();
            log.line("jcnid rejected_peer=" + DaemonLog.quote(refused.get()));
            return;
        }
        metrics.inFlight.incrementAndGet();
        try (ByteBudget.Lease lease = budget.lease()) {
            Frame f = readFrame(ch, lease);
            if (f != null) handle(ch, lease, f);
        } finally {
            metrics.inFlight.decrementAndGet();
        }
    }

    /**
     * Answers a complete request. {@code --max-in-flight} counts requests, not connections: clients
     * still sending (or sending nothing) hold no plugin run and little memory, and the deadline drops them.
     */
    private void handle(SocketChannel ch, ByteBudget.Lease lease, Frame f) throws IOException {
        int inFlight = requests.incrementAndGet();
        try {
            switch (f.header().kind()) {
                case Protocol.KIND_HEALTH -> reply(ch, lease, Protocol.STATUS_RESULT, text(health.get()));
                case Protocol.KIND_METRICS -> reply(ch, lease, Protocol.STATUS_RESULT, text(renderMetrics.get()));
                // Declined only once read, so the client gets its 'F' rather than a broken pipe.
                case Protocol.KIND_EXEC -> {
                    if (inFlight > cfg.maxInFlight()) decline(ch, "busy");
                    else exec(ch, lease, f.body());
                }
                default -> {
                    protocolError("unknown kind " + f.header().kind());
                    malformed(ch, lease, "unknown request kind", Integer.toString(f.header().kind()));
                }
            }
        } finally {
            requests.decrementAndGet();
        }
    }

    /** A request as read: its header and whole body. */
    private record Frame(Protocol.Header header, ByteBuffer body) {}

    /**
     * Reads one frame within the I/O timeout, the body as it arrives and within the budget; null
     * when it was answered (or closed on) already.
     */
    private Frame readFrame(SocketChannel ch, ByteBudget.Lease lease) throws IOException {
        Deadlines.Armed deadline = deadlines.arm(ch, IO_TIMEOUT);
        try (deadline) {
            Protocol.Header h = readHeader(ch);
            if (h == null) return null;
            if (h.version() != Protocol.VERSION) {
                decline(ch, "protocol version " + h.version());
                return null;
            }
            if (h.bodyLength() < 0 || h.bodyLength() > Protocol.MAX_BODY) {
                String size = Integer.toUnsignedString(h.bodyLength());
                protocolError("body of " + size + " bytes is too large");
                malformed(ch, lease, "request too large", "body of " + size + " bytes exceeds " + Protocol.MAX_BODY);
                return null;
            }
            return new Frame(h, ByteBudget.readBody(ch, h.bodyLength(), lease));
        } catch (ByteBudget.TruncatedException e) {
            protocolError("truncated body");
            malformed(ch, lease, "truncated request", e.getMessage());
            return null;
        } catch (ByteBudget.OverBudgetException e) {
            metrics.overBudget.incrementAndGet();
            decline(ch, "busy: " + e.getMessage()); // nothing ran: the shim runs the standalone plugin
            return null;
        } catch (ClosedChannelException e) {
            if (!deadline.fired()) throw e;
            metrics.deadlineDrops.incrementAndGet();
            log.line("jcnid dropped=" + DaemonLog.quote("no complete request within " + IO_TIMEOUT.toSeconds() + " s"));
            return null;
        }
    }

    /** The header; null (the connection is closed without a word) when it is short or not ours. */
    private Protocol.Header readHeader(SocketChannel ch) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(Protocol.HEADER_BYTES);
        while (head.hasRemaining()) {
            if (ch.read(head) < 0) {
                protocolError("truncated header (" + head.position() + " bytes)");
                return null;
            }
        }
        Protocol.Header h = Protocol.parseHeader(head);
        if (h == null) protocolError("bad magic");
        return h;
    }

    private void exec(SocketChannel ch, ByteBudget.Lease lease, ByteBuffer body) throws IOException {
        Protocol.Exec ex;
        try {
            ex = Protocol.parseExec(body);
        } catch (Protocol.ProtocolException e) {
            protocolError(e.getMessage());
            malformed(ch, lease, "malformed request", e.getMessage());
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
                reply(ch, lease, (byte) 0, result);
            }
        });
    }

    private void malformed(SocketChannel ch, ByteBudget.Lease lease, String msg, String details) {
        var o = ExecRequest.errorOutcome("", new CniException(ErrorCode.DECODING_FAILURE, "jcnid: " + msg, details));
        try {
            reply(ch, lease, Protocol.STATUS_RESULT, new Protocol.Result(o.exitCode(), o.stdout().getBytes(StandardCharsets.UTF_8), new byte[0]));
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

    /**
     * Writes an answer once the budget has room for it (waiting up to the I/O timeout for others to
     * finish theirs), to a client given the I/O timeout to take it; otherwise the connection is
     * closed without it: after 'A' the shim then answers ADD "try again later" and runs the others standalone.
     */
    private void reply(SocketChannel ch, ByteBudget.Lease lease, byte status, Protocol.Result r) throws IOException {
        long deadlineNanos = System.nanoTime() + IO_TIMEOUT.toNanos();
        boolean granted;
        try {
            granted = lease.growTo(Protocol.resultBytes(status, r), deadlineNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            granted = false;
        }
        if (!granted) {
            metrics.overBudget.incrementAndGet();
            log.line("jcnid dropped=" + DaemonLog.quote("an answer of " + Protocol.resultBytes(status, r) + " bytes found no memory budget"));
            closeQuietly(ch);
            return;
        }
        Deadlines.Armed deadline = deadlines.arm(ch, Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime())));
        try (deadline) {
            Protocol.writeResult(ch, status, r);
        } catch (ClosedChannelException e) {
            if (!deadline.fired()) throw e;
            metrics.deadlineDrops.incrementAndGet();
            log.line("jcnid dropped=" + DaemonLog.quote("the answer was not taken within " + IO_TIMEOUT.toSeconds() + " s"));
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
