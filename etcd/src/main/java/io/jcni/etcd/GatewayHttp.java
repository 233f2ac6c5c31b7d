package io.jcni.etcd;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The unary calls' transport: one JSON POST and its answer over HTTP/1.1 with keep-alive, on a
 * plain {@link Socket} or an {@link SSLSocket}, with a small pool of idle connections per
 * endpoint. Why not {@code java.net.http}: per call it cost a selector thread's hand-offs,
 * CompletableFutures, body publishers and subscribers and header maps, more CPU than etcd's whole
 * transaction (module README, "The transport").
 *
 * <p>The request goes out in one write with its {@code Content-Length}; the answer is read by
 * {@code Content-Length}, chunked, or to the end of the connection (Go's plain-text refusals), at
 * most {@link EtcdClient#MAX_ANSWER} bytes ({@link AnswerReader}). The timeout bounds the connect, the handshake, the
 * wait until the answer's headers are complete, and then the body as a whole: it must be whole
 * (by its length, chunked with its trailers, or to the end of the stream) within one more timeout
 * after the headers, so an answer takes at most twice the timeout. A peer that stops sending, or
 * trickles its answer a byte at a time, fails the call with a {@link SocketTimeoutException}
 * instead of parking it.
 *
 * <p>A pooled connection may have been closed by etcd since its last use (a restart). Such a call
 * is sent once more on a new connection when nothing of its answer was read and the request
 * provably never reached etcd (its write failed), or, for an idempotent request, when the
 * connection ended before the answer's first byte. Anything else fails as it came.
 */
final class GatewayHttp implements AutoCloseable {
    /** Idle connections kept per endpoint: as many as a busy jcnid has calls in flight (16). */
    static final int MAX_IDLE_PER_ENDPOINT = 16;

    private final SSLSocketFactory tls; // null: plain http
    private final String[] cipherSuites; // the factory's defaults, ChaCha20-Poly1305 first
    private final int timeoutMs;
    private final Map<String, ArrayDeque<Connection>> idle = new HashMap<>(); // by the endpoint's host:port; guarded by this
    private final Set<Connection> open = new HashSet<>(); // idle and in use, for abort(); guarded by this
    private int inFlight; // guarded by this
    private boolean closed; // guarded by this

    /** @param tls the socket factory of the client's SSLContext for https:// endpoints; null for http:// ones */
    GatewayHttp(SSLSocketFactory tls, Duration timeout) {
        this.tls = tls;
        this.cipherSuites = tls == null ? null : chachaFirst(tls.getDefaultCipherSuites());
        this.timeoutMs = (int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis()));
    }

    /** An answer's status and its body, read whole. */
    record Answer(int statusCode, String body) {}

    /**
     * POSTs {@code json} to {@code ep}{@code path}; {@code authorization} (etcd's token) goes in
     * its header when not null. {@code idempotent}: sending it twice does what sending it once does.
     */
    Answer post(URI ep, String path, byte[] json, String authorization, boolean idempotent) throws IOException {
        byte[] request = request(ep, path, json, authorization);
        String where = ep.getRawAuthority();
        Connection c = borrow(where);
        try {
            if (c != null) {
                try {
                    return exchange(c, where, request, ep, path, idempotent);
                } catch (StaleConnection stale) {
                    c.close();
                    forget(c);
                    c = null;
                }
            }
            c = connect(ep);
            return exchange(c, where, request, ep, path, false); // a new connection is never stale
        } finally {
            done(c);
        }
    }

    /** Thrown by an exchange on a pooled connection that may be repeated on a new one. */
    private static final class StaleConnection extends IOException {
        private static final long serialVersionUID = 1L;

        StaleConnection(IOException failure) {
            super(failure);
        }
    }

    /**
     * One request and its answer on {@code c}. On a connection used before, a failure that proves
     * the request did not reach etcd (its write failed), or, with {@code idempotentOnPooled}, an
     * end of the connection before the answer's first byte, becomes {@link StaleConnection}.
     */
    private Answer exchange(Connection c, String where, byte[] request, URI ep, String path, boolean idempotentOnPooled)
            throws IOException {
        boolean pooled = c.uses > 0;
        c.uses++;
        try {
            c.out.write(request);
            c.out.flush();
        } catch (IOException e) {
            if (pooled && !(e instanceof SocketTimeoutException)) throw new StaleConnection(e); // it never reached etcd
            throw e;
        }
        AnswerReader in = c.in;
        in.startAnswer();
        Answer a;
        try {
            a = in.readAnswer(timeoutMs, ep, path);
        } catch (EtcdException tooLarge) {
            throw tooLarge;
        } catch (IOException e) {
            if (pooled && idempotentOnPooled && in.answerBytes() == 0 && !(e instanceof SocketTimeoutException)) {
                throw new StaleConnection(e);
            }
            throw e;
        }
        if (in.reusable()) giveBack(where, c);
        return a;
    }

    /**
     * {@code suites} with the ChaCha20-Poly1305 ones first, the rest in their order. The JVMs that
     * make etcd calls (jcnid, a standalone plugin) run C1 only, and there AES-GCM has none of its
     * intrinsics: 1.7 KB (one allocation's request and answer) took 250–430 µs to seal with it and
     * 90 µs with ChaCha20-Poly1305 (module README). Go's TLS server (etcd) takes the client's
     * preference between the two, and uses AES-GCM where the client or its own settings ask for it.
     */
    static String[] chachaFirst(String[] suites) {
        String[] out = new String[suites.length];
        int n = 0;
        for (String s : suites) if (s.contains("CHACHA20")) out[n++] = s;
        for (String s : suites) if (!s.contains("CHACHA20")) out[n++] = s;
        return out;
    }

    private static int port(URI ep) {
        return ep.getPort() >= 0 ? ep.getPort() : ep.getScheme().equals("https") ? 443 : 80;
    }

    /** The request's bytes: head and body in one buffer, so it goes out in one write. */
    static byte[] request(URI ep, String path, byte[] json, String authorization) {
        StringBuilder head = new StringBuilder(160);
        head.append("POST ").append(path).append(" HTTP/1.1\r\nHost: ").append(ep.getRawAuthority())
                .append("\r\nContent-Type: application/json\r\nContent-Length: ").append(json.length).append("\r\n");
        if (authorization != null) {
            for (int i = 0; i < authorization.length(); i++) {
                char ch = authorization.charAt(i);
                if (ch < 0x20 || ch > 0x7e) throw new IllegalArgumentException("etcd token with a control or non-ASCII character");
            }
            head.append("Authorization: ").append(authorization).append("\r\n");
        }
        head.append("\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = new byte[h.length + json.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(json, 0, out, h.length, json.length);
        return out;
    }

    // ------------------------------------------------------------------ the pool

    private synchronized Connection borrow(String where) throws IOException {
        if (closed) throw new IOException("etcd client closed");
        inFlight++;
        ArrayDeque<Connection> q = idle.get(where);
        Connection c = q == null ? null : q.pollLast(); // the most recently used: the least likely to be stale
        if (c != null) c.idle = false;
        return c;
    }

    private synchronized void giveBack(String where, Connection c) {
        if (closed) return; // closed by done(), as it is not idle
        ArrayDeque<Connection> q = idle.get(where);
        if (q == null) {
            q = new ArrayDeque<>();
            idle.put(where, q);
        }
        if (q.size() >= MAX_IDLE_PER_ENDPOINT) return;
        c.idle = true;
        q.addLast(c);
    }

    /** The end of a call: a connection not given back to the pool is closed. */
    private void done(Connection c) {
        synchronized (this) {
            inFlight--;
            if (inFlight == 0) notifyAll();
            if (c == null || c.idle) return;
            open.remove(c);
        }
        c.close();
    }

    private synchronized void forget(Connection c) {
        open.remove(c);
    }

    private Connection connect(URI ep) throws IOException {
        String host = ep.getHost();
        int port = port(ep);
        Socket raw = new Socket();
        Connection c = null;
        try {
            raw.setTcpNoDelay(true);
            raw.connect(new InetSocketAddress(host, port), timeoutMs);
            raw.setSoTimeout(timeoutMs);
            Socket s = raw;
            if (ep.getScheme().equals("https")) {
                if (tls == null) throw new IllegalStateException("https endpoint without a TLS context");
                SSLSocket t = (SSLSocket) tls.createSocket(raw, host, port, true);
                SSLParameters p = t.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS"); // etcd's certificate must name the host, as a browser checks
                p.setCipherSuites(cipherSuites);
                t.setSSLParameters(p);
                s = t;
                t.startHandshake();
            }
            c = new Connection(s);
        } finally {
            if (c == null) {
                try {
                    raw.close();
                } catch (IOException ignored) {
                    // the failure that brought us here is what the caller must see
                }
            }
        }
        synchronized (this) {
            if (closed) {
                c.close();
                throw new IOException("etcd client closed");
            }
            open.add(c);
        }
        return c;
    }

    /** How many connections are idle in the pool (tests). */
    synchronized int idleCount() {
        int n = 0;
        for (ArrayDeque<Connection> q : idle.values()) n += q.size();
        return n;
    }

    /** Closes the idle connections and waits for the calls in flight; later calls fail. */
    @Override
    public void close() {
        Set<Connection> toClose = new HashSet<>();
        synchronized (this) {
            closed = true;
            for (ArrayDeque<Connection> q : idle.values()) toClose.addAll(q);
            idle.clear();
            open.removeAll(toClose);
        }
        for (Connection c : toClose) c.close();
        boolean interrupted = false;
        synchronized (this) {
            while (inFlight > 0) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                    break;
                }
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    /** Closes every connection at once: the calls in flight fail; later calls fail. */
    void abort() {
        Set<Connection> toClose;
        synchronized (this) {
            closed = true;
            idle.clear();
            toClose = new HashSet<>(open);
            open.clear();
        }
        for (Connection c : toClose) c.close();
    }

    /** A socket and its reader; {@code uses} and {@code idle} are touched only by the call holding it or under the pool's lock. */
    private static final class Connection {
        final Socket socket;
        final OutputStream out;
        final AnswerReader in;
        int uses;
        boolean idle;

        Connection(Socket s) throws IOException {
            this.socket = s;
            this.out = s.getOutputStream();
            this.in = new AnswerReader(s.getInputStream(), s);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // nothing left to do with it
            }
        }
    }
}
