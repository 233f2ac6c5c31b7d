package io.jcni.etcd;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Reads HTTP/1.1 answers from one connection's input stream, buffered. Knows whether the
 * connection can carry the next request once an answer is read.
 */
final class AnswerReader {
    /** The most of an answer's status line and headers read. */
    static final int MAX_HEAD = 64 << 10;

    private final InputStream in;
    private final Socket socket; // for the read timeout; null in tests
    private final byte[] buf = new byte[8192];
    private int pos, lim;
    private long answerBytes;
    private long bodyDeadline; // System.nanoTime() by which the body must be whole; 0 while the headers are read
    private int bodyTimeoutMs;
    private boolean reusable;

    AnswerReader(InputStream in, Socket socket) {
        this.in = in;
        this.socket = socket;
    }

    void startAnswer() {
        answerBytes = 0;
        bodyDeadline = 0;
        reusable = false;
    }

    /** Bytes of the current answer received so far. */
    long answerBytes() {
        return answerBytes;
    }

    /** Whether the last answer was read whole and the connection may carry another request. */
    boolean reusable() {
        return reusable;
    }

    /**
     * One whole answer: informational (1xx) answers skipped, the body by its length, chunked,
     * or up to the end of the stream. The headers must be complete within {@code timeoutMs}, and
     * the body (with a chunked body's trailers) whole within {@code timeoutMs} more: a peer that
     * trickles its body, each byte within the timeout, fails the call after at most twice the
     * timeout instead of holding it as long as it likes.
     */
    GatewayHttp.Answer readAnswer(int timeoutMs, URI ep, String path) throws IOException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        int headBytes = 0;
        while (true) {
            String status = line(deadline, headBytes);
            headBytes += status.length() + 2;
            int code = statusCode(status);
            long length = -1;
            boolean chunked = false, close = status.startsWith("HTTP/1.0");
            while (true) {
                String header = line(deadline, headBytes);
                if (header.isEmpty()) break;
                headBytes += header.length() + 2;
                if (headBytes > MAX_HEAD) throw new IOException("answer headers over " + MAX_HEAD + " bytes");
                int colon = header.indexOf(':');
                if (colon <= 0) continue;
                String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = header.substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> length = contentLength(value);
                    case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                    case "connection" -> {
                        String v = value.toLowerCase(Locale.ROOT);
                        if (v.contains("close")) close = true;
                        else if (v.contains("keep-alive")) close = false;
                    }
                    default -> {}
                }
            }
            if (code >= 100 && code < 200) continue; // 100 Continue and the like: the answer follows
            bodyDeadline = System.nanoTime() + timeoutMs * 1_000_000L;
            bodyTimeoutMs = timeoutMs;
            byte[] body;
            if (code == 204 || code == 304) body = new byte[0];
            else if (chunked) body = chunked(ep, path);
            else if (length >= 0) body = exactly(length, ep, path);
            else {
                body = toEnd(ep, path);
                close = true;
            }
            reusable = !close;
            return new GatewayHttp.Answer(code, new String(body, StandardCharsets.UTF_8));
        }
    }

    private static int statusCode(String status) throws IOException {
        // "HTTP/1.1 200 OK"
        if (!status.startsWith("HTTP/1.") || status.length() < 12 || status.charAt(8) != ' ') {
            throw new IOException("not an HTTP answer: " + printable(status));
        }
        try {
            return Integer.parseInt(status.substring(9, 12));
        } catch (NumberFormatException e) {
            throw new IOException("not an HTTP answer: " + printable(status), e);
        }
    }

    private static long contentLength(String v) throws IOException {
        try {
            long n = Long.parseLong(v);
            if (n < 0) throw new NumberFormatException(v);
            return n;
        } catch (NumberFormatException e) {
            throw new IOException("bad Content-Length: " + printable(v), e);
        }
    }

    private static String printable(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        StringBuilder b = new StringBuilder(t.length());
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return b.toString();
    }

    private static EtcdException tooLarge(URI ep, String path) {
        return new EtcdException("etcd " + ep + path + ": answer over " + EtcdClient.MAX_ANSWER + " bytes");
    }

    private byte[] exactly(long length, URI ep, String path) throws IOException {
        if (length > EtcdClient.MAX_ANSWER) throw tooLarge(ep, path);
        byte[] out = new byte[(int) length];
        int n = 0;
        while (n < out.length) {
            if (pos == lim) bodyFill(true);
            int k = Math.min(lim - pos, out.length - n);
            System.arraycopy(buf, pos, out, n, k);
            pos += k;
            n += k;
        }
        return out;
    }

    private byte[] chunked(URI ep, String path) throws IOException {
        Body out = new Body();
        while (true) {
            String sizeLine = line(0, 0);
            int semi = sizeLine.indexOf(';'); // chunk extensions: ignored
            String hex = (semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim();
            long size;
            try {
                size = Long.parseLong(hex, 16);
            } catch (NumberFormatException e) {
                throw new IOException("bad chunk size: " + printable(sizeLine), e);
            }
            if (size < 0) throw new IOException("bad chunk size: " + printable(sizeLine));
            if (size == 0) break;
            if (out.size + size > EtcdClient.MAX_ANSWER) throw tooLarge(ep, path);
            long left = size;
            while (left > 0) {
                if (pos == lim) bodyFill(true);
                int k = (int) Math.min(lim - pos, left);
                out.add(buf, pos, k);
                pos += k;
                left -= k;
            }
            if (!line(0, 0).isEmpty()) throw new IOException("chunk not followed by CRLF");
        }
        int trailers = 0;
        while (true) { // trailers: ignored
            String t = line(0, 0);
            if (t.isEmpty()) break;
            trailers += t.length() + 2;
            if (trailers > MAX_HEAD) throw new IOException("answer trailers over " + MAX_HEAD + " bytes");
        }
        return out.bytes();
    }

    private byte[] toEnd(URI ep, String path) throws IOException {
        Body out = new Body();
        while (true) {
            if (pos == lim && !bodyFill(false)) return out.bytes();
            if (out.size + (lim - pos) > EtcdClient.MAX_ANSWER) throw tooLarge(ep, path);
            out.add(buf, pos, lim - pos);
            pos = lim;
        }
    }

    /**
     * One line without its CRLF (a bare LF is accepted too), at most {@link #MAX_HEAD} bytes
     * counting {@code before}; with a {@code deadline} (nanoTime, 0: the body's, once the headers
     * are read) the read timeout is what is left of it.
     */
    private String line(long deadline, int before) throws IOException {
        StringBuilder b = new StringBuilder(64);
        while (true) {
            if (pos == lim) {
                if (deadline != 0) {
                    long left = (deadline - System.nanoTime()) / 1_000_000L;
                    if (left <= 0) throw new SocketTimeoutException("no whole answer within the timeout");
                    timeout(left);
                    fill(true);
                } else {
                    bodyFill(true);
                }
            }
            byte c = buf[pos++];
            if (c == '\n') {
                int end = b.length();
                if (end > 0 && b.charAt(end - 1) == '\r') b.setLength(end - 1);
                return b.toString();
            }
            b.append((char) (c & 0xff));
            if (before + b.length() > MAX_HEAD) throw new IOException("answer headers over " + MAX_HEAD + " bytes");
        }
    }

    /** Sets the socket's read timeout to {@code ms} (at least 1: 0 would mean none). */
    private void timeout(long ms) throws IOException {
        if (socket != null) socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, ms)));
    }

    /**
     * {@link #fill} for the body: the read may take what is left of the body's deadline. A body
     * that arrived with its headers (etcd's usual answer) reads nothing more and costs nothing here.
     */
    private boolean bodyFill(boolean required) throws IOException {
        long left = (bodyDeadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) throw bodyTimedOut(null);
        timeout(left);
        try {
            return fill(required);
        } catch (SocketTimeoutException e) {
            throw bodyTimedOut(e);
        }
    }

    /** A timeout still (callers repeat or report a call on that cue), saying which part was late. */
    private SocketTimeoutException bodyTimedOut(SocketTimeoutException cause) {
        SocketTimeoutException e = new SocketTimeoutException("answer not whole within the timeout (its body took over "
                + bodyTimeoutMs + " ms after its headers)");
        if (cause != null) e.initCause(cause);
        return e;
    }

    /** Reads more into the buffer; false at the end of the stream unless {@code required} (then EOFException). */
    private boolean fill(boolean required) throws IOException {
        int n = in.read(buf, 0, buf.length);
        if (n < 0) {
            if (!required) return false;
            throw new EOFException(answerBytes == 0 ? "etcd closed the connection before answering (EOF)"
                    : "etcd closed the connection in the middle of its answer (EOF)");
        }
        pos = 0;
        lim = n;
        answerBytes += n;
        return true;
    }

    /** A growing body, bounded by the answer limit's check in the caller. */
    private static final class Body {
        private byte[] bytes = new byte[1024];
        long size;

        void add(byte[] b, int off, int n) {
            if (size + n > bytes.length) bytes = java.util.Arrays.copyOf(bytes, (int) Math.max(size + n, Math.min((long) bytes.length * 2, EtcdClient.MAX_ANSWER)));
            System.arraycopy(b, off, bytes, (int) size, n);
            size += n;
        }

        byte[] bytes() {
            return java.util.Arrays.copyOf(bytes, (int) size);
        }
    }
}
