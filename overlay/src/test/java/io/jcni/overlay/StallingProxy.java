package io.jcni.overlay;

import io.jcni.linux.Netns;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A TCP proxy to etcd listening on 127.0.0.1 inside a host's namespace, which can be told to
 * stall, as a hung proxy in front of etcd would: from then on each request is kept from etcd and
 * answered by the proxy itself, headers at once and then a body that trickles (a byte every
 * 300 ms, a few bytes, then nothing). Each read of the client returns within its timeout, and
 * {@code java.net.http}'s request timeout ends with the headers, so the caller waits forever
 * unless something times the whole answer (the etcd client's unary transport does); etcd hears
 * nothing meanwhile (a lease kept alive through the proxy expires). When the stall ends, new
 * requests flow; a connection that got a stalled answer stays held, silent, until the client or
 * the proxy closes it (as a hung peer would).
 * Or it can be told to flood: each response becomes an endless body, which a client that reads
 * answers into memory pays for with an OutOfMemoryError. Or to trickle whole connections: the
 * ones open are closed (as an etcd restart would), and new ones pass etcd's bytes a byte every
 * 300 ms from the first (with TLS: a handshake that never completes, each read within its
 * timeout, which no answer deadline covers).
 */
final class StallingProxy implements AutoCloseable {
    private final Netns ns;
    private final InetSocketAddress upstream;
    private final ServerSocketChannel server;
    private final AtomicBoolean stalling = new AtomicBoolean();
    private final AtomicBoolean flooding = new AtomicBoolean();
    private final AtomicBoolean tricklingConnections = new AtomicBoolean();
    private volatile boolean closed;
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    StallingProxy(String netnsPath, String upstreamHost, int upstreamPort) throws IOException {
        this.ns = Netns.open(netnsPath);
        this.upstream = new InetSocketAddress(upstreamHost, upstreamPort);
        // Sockets belong to the namespace they are created in, whichever thread uses them later.
        this.server = ns.run(() -> ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        this.acceptor = Thread.ofVirtual().start(this::acceptLoop);
    }

    /** The endpoint to give the agent ({@code --etcd-endpoints}). */
    String endpoint() throws IOException {
        return "http://127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    void stall(boolean on) {
        stalling.set(on);
    }

    void flood(boolean on) {
        flooding.set(on);
    }

    /** On: closes the connections open now; each new one trickles etcd's bytes from the first. Off: new connections flow. */
    void trickleConnections(boolean on) {
        tricklingConnections.set(on);
        if (on) for (SocketChannel c : open) closeQuietly(c);
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                SocketChannel up = ns.run(() -> SocketChannel.open(upstream));
                open.add(client);
                open.add(up);
                boolean trickled = tricklingConnections.get();
                Thread.ofVirtual().start(() -> pump(client, up, false));
                Thread.ofVirtual().start(() -> {
                    if (trickled) trickle(up, client);
                    else pump(up, client, true);
                });
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Copies {@code from} to {@code to}; while stalling, a request is answered as the class comment says instead. */
    private void pump(SocketChannel from, SocketChannel to, boolean responses) {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        try {
            while (true) {
                buf.clear();
                if (from.read(buf) < 0) break;
                buf.flip();
                if (responses && flooding.get()) {
                    flood(to);
                    break;
                }
                if (!responses && stalling.get()) {
                    trickleAnAnswer(from);
                    break;
                }
                while (buf.hasRemaining()) to.write(buf);
            }
        } catch (IOException | InterruptedException e) {
            // the other side went away
        }
        closeQuietly(from);
        closeQuietly(to);
    }

    /** Copies {@code from} to {@code to} a byte every 300 ms, until either side goes or the proxy closes. */
    private void trickle(SocketChannel from, SocketChannel to) {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        try {
            while (!closed) {
                buf.clear();
                if (from.read(buf) < 0) break;
                buf.flip();
                while (!closed && buf.hasRemaining()) {
                    to.write(ByteBuffer.wrap(new byte[] {buf.get()}));
                    Thread.sleep(300);
                }
            }
        } catch (IOException | InterruptedException e) {
            // the other side went away
        }
        closeQuietly(from);
        closeQuietly(to);
    }

    /** Headers announcing a 2 GB answer, then bytes until the client goes away or the flood stops. */
    private void flood(SocketChannel to) throws IOException {
        to.write(ByteBuffer.wrap("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000000000\r\n\r\n[\""
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        byte[] x = new byte[256 * 1024];
        java.util.Arrays.fill(x, (byte) 'x');
        long sent = 0;
        while (flooding.get() && !closed && sent < 1_500_000_000L) {
            ByteBuffer b = ByteBuffer.wrap(x);
            while (b.hasRemaining()) sent += to.write(b);
        }
    }

    /**
     * The proxy's own answer to a request it keeps from etcd: the headers at once, then its body a
     * byte every 300 ms (each read of the client returns well inside its read timeout, so only a
     * deadline on the whole answer can tell that it will not end), part of it, then nothing until
     * the client or the proxy closes.
     */
    private void trickleAnAnswer(SocketChannel client) throws IOException, InterruptedException {
        byte[] body = "{\"header\":{\"cluster_id\":\"1\",\"member_id\":\"2\",\"revision\":\"3\",\"raft_term\":\"4\"}}"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        client.write(ByteBuffer.wrap(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
        for (int i = 0; i < body.length / 2 && !closed && client.isOpen(); i++) {
            client.write(ByteBuffer.wrap(body, i, 1));
            Thread.sleep(300);
        }
        while (!closed && client.isOpen()) Thread.sleep(50);
    }

    private static void closeQuietly(SocketChannel c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        stalling.set(false);
        try {
            server.close();
        } catch (IOException ignored) {
            // closing
        }
        for (SocketChannel c : open) closeQuietly(c);
        acceptor.interrupt();
        ns.close();
    }
}
