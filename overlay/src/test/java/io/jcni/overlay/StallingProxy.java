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
 * stall: from then on each response's headers pass and its body trickles (a byte every 300 ms,
 * what was read with the headers, then nothing), the failure a client's per-read timeout does not
 * cover (nor {@code java.net.http}'s request timeout, which ends with the headers), so the caller
 * waits forever unless something times the whole answer (the etcd client's unary transport does). When the stall ends, new connections flow
 * normally; held ones stay held, open and silent, until the proxy closes (as a hung peer would).
 * Or it can be told to flood: each response becomes an endless body, which a client that reads
 * answers into memory pays for with an OutOfMemoryError.
 */
final class StallingProxy implements AutoCloseable {
    private final Netns ns;
    private final InetSocketAddress upstream;
    private final ServerSocketChannel server;
    private final AtomicBoolean stalling = new AtomicBoolean();
    private final AtomicBoolean flooding = new AtomicBoolean();
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

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                SocketChannel up = ns.run(() -> SocketChannel.open(upstream));
                open.add(client);
                open.add(up);
                Thread.ofVirtual().start(() -> pump(client, up, false));
                Thread.ofVirtual().start(() -> pump(up, client, true));
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Copies {@code from} to {@code to}; for responses, trickles and then holds what follows a header block while stalling. */
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
                if (responses && stalling.get()) {
                    int end = headerEnd(buf);
                    if (end >= 0) {
                        int all = buf.limit();
                        buf.limit(end);
                        while (buf.hasRemaining()) to.write(buf);
                        // The body trickles, a byte every 300 ms: each read of the client returns well
                        // inside its read timeout, so only a deadline on the whole answer can tell
                        // that the call will not end. Then nothing more comes.
                        buf.limit(all);
                        while (!closed && buf.hasRemaining()) {
                            to.write(ByteBuffer.wrap(new byte[] {buf.get()}));
                            Thread.sleep(300);
                        }
                        while (!closed) Thread.sleep(50);
                        break;
                    }
                }
                while (buf.hasRemaining()) to.write(buf);
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

    /** The index just after the first CRLFCRLF in {@code b}, or -1. */
    private static int headerEnd(ByteBuffer b) {
        for (int i = b.position(); i + 3 < b.limit(); i++) {
            if (b.get(i) == '\r' && b.get(i + 1) == '\n' && b.get(i + 2) == '\r' && b.get(i + 3) == '\n') return i + 4;
        }
        return -1;
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
