package io.jcni.daemon;

import java.io.EOFException;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
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

    /** The health text ("status ok", "pid N", ...); IOException when no daemon answers. */
    public static String health(Path socket) throws IOException {
        return call(socket, Protocol.encodeRequest(Protocol.KIND_HEALTH, null)).result().stdoutText();
    }

    /** The Prometheus exposition. */
    public static String metrics(Path socket) throws IOException {
        return call(socket, Protocol.encodeRequest(Protocol.KIND_METRICS, null)).result().stdoutText();
    }

    /** Sends a raw frame and reads whatever answer comes; a declined request has a null result. */
    public static Reply call(Path socket, ByteBuffer request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
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
}
