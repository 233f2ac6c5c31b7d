package io.jcni.daemon;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The jcnid wire protocol, version 1. All integers are unsigned 32-bit big-endian unless said
 * otherwise; "string" is a u32 length followed by that many bytes (UTF-8 for text).
 *
 * <pre>
 * request  = "JCNI" u8 version(=1) u8 kind u16 flags(=0) u32 bodyLength body
 *   kind 1 EXEC:    body = string pluginType, u32 envCount, envCount x string "KEY=VALUE", string stdin
 *   kind 2 HEALTH:  body empty
 *   kind 3 METRICS: body empty
 * response = u8 status [result]
 *   'A' accepted: the plugin is running; a result follows when it is done
 *   'R' result:   a result follows at once; no plugin ran (health, metrics, malformed request)
 *   'F' fallback: declined (unknown type, busy, shutting down, other protocol version); nothing ran,
 *                 the client should run the standalone plugin; the connection closes
 * result   = "JCNR" i32 exitCode, string stdout, string stderr
 * </pre>
 *
 * One request per connection. A frame whose header cannot be read (bad magic, short header) is
 * answered by closing the connection.
 */
public final class Protocol {
    private Protocol() {}

    // Not public: an array constant is writable by whoever can see it.
    static final byte[] MAGIC = {'J', 'C', 'N', 'I'};
    static final byte[] RESULT_MAGIC = {'J', 'C', 'N', 'R'};
    public static final int VERSION = 1;
    public static final int HEADER_BYTES = 12;
    /** Largest request body accepted (environment + network configuration). */
    public static final int MAX_BODY = 16 << 20;
    /** Largest result part (stdout or stderr) a client accepts. */
    public static final int MAX_RESULT_PART = 64 << 20;

    public static final int KIND_EXEC = 1;
    public static final int KIND_HEALTH = 2;
    public static final int KIND_METRICS = 3;

    public static final byte STATUS_ACCEPTED = 'A';
    public static final byte STATUS_RESULT = 'R';
    public static final byte STATUS_FALLBACK = 'F';

    /** A malformed frame; the message says what was wrong. */
    public static final class ProtocolException extends IOException {
        public ProtocolException(String msg) {
            super(msg);
        }
    }

    /** What a header announces. */
    public record Header(int version, int kind, int flags, int bodyLength) {}

    /** An EXEC request body. */
    public record Exec(String type, List<String> env, byte[] stdin) {}

    /** A result frame. */
    public record Result(int exitCode, byte[] stdout, byte[] stderr) {
        public String stdoutText() {
            return new String(stdout, StandardCharsets.UTF_8);
        }

        public String stderrText() {
            return new String(stderr, StandardCharsets.UTF_8);
        }
    }

    /** Parses a header; null when the magic is wrong (the caller closes the connection). */
    public static Header parseHeader(ByteBuffer b) {
        for (int i = 0; i < 4; i++) if (b.get(i) != MAGIC[i]) return null;
        return new Header(b.get(4) & 0xff, b.get(5) & 0xff, b.getShort(6) & 0xffff, b.getInt(8));
    }

    /** Parses an EXEC body, insisting that its parts fill it exactly. */
    public static Exec parseExec(ByteBuffer body) throws ProtocolException {
        String type = new String(part(body, "plugin type"), StandardCharsets.UTF_8);
        long count = u32(body, "environment count");
        // Every entry takes at least its 4-byte length: a count beyond that is a lie.
        if (count > body.remaining() / 4) throw new ProtocolException("environment count " + count + " exceeds the frame");
        List<String> env = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) env.add(new String(part(body, "environment entry"), StandardCharsets.UTF_8));
        byte[] stdin = part(body, "stdin");
        if (body.hasRemaining()) throw new ProtocolException(body.remaining() + " trailing bytes after stdin");
        return new Exec(type, env, stdin);
    }

    private static long u32(ByteBuffer b, String what) throws ProtocolException {
        if (b.remaining() < 4) throw new ProtocolException("frame truncated in " + what);
        return b.getInt() & 0xffffffffL;
    }

    private static byte[] part(ByteBuffer b, String what) throws ProtocolException {
        long n = u32(b, what + " length");
        if (n > b.remaining()) throw new ProtocolException(what + " length " + n + " exceeds the frame");
        byte[] out = new byte[(int) n];
        b.get(out);
        return out;
    }

    /** Encodes a whole request. */
    public static ByteBuffer encodeRequest(int kind, Exec exec) {
        byte[] type = exec == null ? null : exec.type().getBytes(StandardCharsets.UTF_8);
        List<byte[]> env = new ArrayList<>();
        long body = 0;
        if (exec != null) {
            for (String e : exec.env()) env.add(e.getBytes(StandardCharsets.UTF_8));
            body = 4L + type.length + 4 + 4 + exec.stdin().length;
            for (byte[] e : env) body += 4 + e.length;
        }
        if (body > Integer.MAX_VALUE - HEADER_BYTES) throw new IllegalArgumentException("request too large");
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + (int) body);
        b.put(MAGIC).put((byte) VERSION).put((byte) kind).putShort((short) 0).putInt((int) body);
        if (exec != null) {
            b.putInt(type.length).put(type).putInt(env.size());
            for (byte[] e : env) b.putInt(e.length).put(e);
            b.putInt(exec.stdin().length).put(exec.stdin());
        }
        return b.flip();
    }

    /** Encodes a status byte followed by a result frame. */
    public static ByteBuffer encodeResult(byte status, Result r) {
        ByteBuffer b = ByteBuffer.allocate((status == 0 ? 0 : 1) + 4 + 4 + 4 + r.stdout().length + 4 + r.stderr().length);
        if (status != 0) b.put(status);
        b.put(RESULT_MAGIC).putInt(r.exitCode()).putInt(r.stdout().length).put(r.stdout());
        b.putInt(r.stderr().length).put(r.stderr());
        return b.flip();
    }

    /** The bytes {@link #writeResult} sends. */
    public static long resultBytes(byte status, Result r) {
        return (status == 0 ? 0 : 1) + 16L + r.stdout().length + r.stderr().length;
    }

    /**
     * Writes what {@link #encodeResult} encodes without copying stdout and stderr into one buffer
     * first: an answer costs its parts once, not twice.
     */
    public static void writeResult(GatheringByteChannel ch, byte status, Result r) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(13);
        if (status != 0) head.put(status);
        head.put(RESULT_MAGIC).putInt(r.exitCode()).putInt(r.stdout().length).flip();
        ByteBuffer mid = ByteBuffer.allocate(4).putInt(r.stderr().length).flip();
        ByteBuffer[] parts = {head, ByteBuffer.wrap(r.stdout()), mid, ByteBuffer.wrap(r.stderr())};
        long left = resultBytes(status, r);
        while (left > 0) left -= ch.write(parts);
    }

    /** Reads a result frame (after the status byte). */
    public static Result readResult(ReadableByteChannel ch) throws IOException {
        ByteBuffer head = readExactly(ch, 12);
        for (int i = 0; i < 4; i++) if (head.get(i) != RESULT_MAGIC[i]) throw new ProtocolException("bad result magic");
        int exit = head.getInt(4);
        byte[] out = readPart(ch, head.getInt(8) & 0xffffffffL);
        byte[] err = readPart(ch, readExactly(ch, 4).getInt(0) & 0xffffffffL);
        return new Result(exit, out, err);
    }

    private static byte[] readPart(ReadableByteChannel ch, long n) throws IOException {
        if (n > MAX_RESULT_PART) throw new ProtocolException("result part of " + n + " bytes is too large");
        return readExactly(ch, (int) n).array();
    }

    /** Reads exactly n bytes; EOFException when the peer closes first. */
    public static ByteBuffer readExactly(ReadableByteChannel ch, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) throw new EOFException("peer closed after " + b.position() + " of " + n + " bytes");
        }
        return b.flip();
    }

    public static void writeFully(WritableByteChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) ch.write(b);
    }
}
