package io.jcni.daemon;

import java.io.EOFException;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A Java client of the jcnid socket: what the CLI's status and metrics commands (and the tests) use. */
public final class JcnidClient {
    private JcnidClient() {}

    /** The daemon's answer: its status byte and, unless it declined, the result. */
    public record Reply(byte status, Protocol.Result result) {
        public boolean declined() {
            return status == Protocol.STATUS_FALLBACK;
        }
    }

    public static Reply exec(Path socket, String type, Map<String, String> env, byte[] stdin) throws IOException {
        List<String> entries = new ArrayList<>();
        env.forEach((k, v) -> entries.add(k + "=" + v));
        return call(socket, Protocol.encodeRequest(Protocol.KIND_EXEC, new Protocol.Exec(type, entries, stdin)));
    }

    /**
     * How long status and metrics wait for an answer: a daemon that cannot answer these (they run
     * no plugin) within it is wedged, and {@code jcnid status} must say so rather than hang.
     */
    static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(10);

    /** The health text ("status ok", "pid N", ...); IOException when no daemon answers in time. */
    public static String health(Path socket) throws IOException {
        return call(socket, Protocol.encodeRequest(Protocol.KIND_HEALTH, null), ANSWER_TIMEOUT).result().stdoutText();
    }

    /** The Prometheus exposition; IOException when no daemon answers in time. */
    public static String metrics(Path socket) throws IOException {
        return call(socket, Protocol.encodeRequest(Protocol.KIND_METRICS, null), ANSWER_TIMEOUT).result().stdoutText();
    }

    /** {@link #call(Path, ByteBuffer)}, giving up (IOException) when the whole exchange takes longer than timeout. */
    static Reply call(Path socket, ByteBuffer request, Duration timeout) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            // Closing the channel wakes a blocked read with AsynchronousCloseException.
            Thread dog = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(timeout);
                    ch.close();
                } catch (InterruptedException | IOException e) {
                    // answered in time, or already closed
                }
            });
            try {
                return exchange(ch, request);
            } catch (java.nio.channels.AsynchronousCloseException e) {
                throw new java.net.SocketTimeoutException("jcnid did not answer within " + timeout.toSeconds() + " s");
            } finally {
                dog.interrupt();
            }
        }
    }

    /** Sends a raw frame and reads whatever answer comes; a declined request has a null result. */
    public static Reply call(Path socket, ByteBuffer request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            return exchange(ch, request);
        }
    }

    private static Reply exchange(SocketChannel ch, ByteBuffer request) throws IOException {
        Protocol.writeFully(ch, request);
        ByteBuffer st = ByteBuffer.allocate(1);
        if (ch.read(st) < 0) throw new EOFException("daemon closed the connection without answering");
        byte status = st.get(0);
        return switch (status) {
            case Protocol.STATUS_FALLBACK -> new Reply(status, null);
            case Protocol.STATUS_ACCEPTED, Protocol.STATUS_RESULT -> new Reply(status, Protocol.readResult(ch));
            default -> throw new Protocol.ProtocolException("unknown status byte " + status);
        };
    }
}
