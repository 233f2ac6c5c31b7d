package io.jcni.docker.server;

import io.jcni.daemon.PeerCredentials;
import io.jcni.docker.api.RemoteApi;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Instant;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * HTTP/1.1 on the plugin socket dockerd discovers ({@code /run/docker/plugins/NAME.sock}), served by
 * Jetty's unix-domain connector; every request goes to {@link RemoteApi}.
 *
 * <p>Root only: the socket is bound inside a fresh 0700 directory, made 0600, and only then renamed
 * to its public name, so there is no moment at which another user could connect; and every
 * connection's peer is checked (SO_PEERCRED, {@link PeerCredentials}), so a socket whose mode
 * someone opened up still serves root alone.
 *
 * <p>Slow clients cannot starve it: a request body is read as it arrives, without a thread waiting
 * for it, up to {@link #MAX_BODY} bytes; a request that has not arrived whole within its deadline
 * ({@link PluginConnectionFactory}) has its connection closed.
 */
public final class PluginSocketServer implements AutoCloseable {
    /** libnetwork's payloads are a few KiB; anything near this is not dockerd. */
    static final int MAX_BODY = 1 << 20;
    /** From a request's first bytes to the end of its body; dockerd writes a request at once. */
    public static final long READ_DEADLINE_MILLIS = 10_000;
    /** Jetty's default, stated: a keep-alive connection with no request for this long is closed. */
    static final long IDLE_TIMEOUT_MILLIS = 30_000;
    static final String CONTENT_TYPE = "application/vnd.docker.plugins.v1+json";

    static {
        // Jetty's MemoryUtils otherwise starts the platform MBean server to ask HotSpot whether
        // oops are compressed: about half a second of JMX start-up (measured), for a buffer-padding hint.
        if (System.getProperty("org.eclipse.jetty.util.referencesPerCacheLine") == null) {
            System.setProperty("org.eclipse.jetty.util.referencesPerCacheLine", "16");
        }
    }

    private final Path socket;
    private final Server server;
    private PluginSocketServer(Path socket, Server server) {
        this.socket = socket;
        this.server = server;
    }

    /** Binds {@code socket} (a stale socket file is replaced, a live one is an error) and starts serving. */
    public static PluginSocketServer start(Path socket, RemoteApi api) throws IOException {
        return start(socket, api, null, READ_DEADLINE_MILLIS);
    }

    /**
     * @param log                where refused peers are noted (null: nowhere)
     * @param readDeadlineMillis how long a request may take to arrive whole
     */
    public static PluginSocketServer start(Path socket, RemoteApi api, PrintStream log, long readDeadlineMillis) throws IOException {
        UserPrincipal root = PeerCredentials.root();
        Path sock = socket.toAbsolutePath();
        Path dir = sock.getParent();
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // as dockerd makes it
        }
        if (Files.exists(sock, LinkOption.NOFOLLOW_LINKS)) {
            if (live(sock)) throw new IOException("another driver is serving " + sock);
            Files.delete(sock);
        }
        removeStaleStaging(dir, "." + sock.getFileName() + ".");
        Path staging = Files.createTempDirectory(dir, "." + sock.getFileName() + ".",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path tmp = staging.resolve("s");

        QueuedThreadPool pool = new QueuedThreadPool(32, 2);
        pool.setName("jcni-docker");
        pool.setDaemon(true);
        Server server = new Server(pool);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        UnixDomainServerConnector c = new RootOnlyConnector(server, new PluginConnectionFactory(http, readDeadlineMillis), root, log);
        c.setUnixDomainPath(tmp);
        c.setIdleTimeout(IDLE_TIMEOUT_MILLIS);
        server.addConnector(c);
        server.setHandler(new ApiHandler(api));
        try {
            server.start();
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            Files.move(tmp, sock, StandardCopyOption.ATOMIC_MOVE);
            deleteTree(staging); // empty now; a driver killed before this line leaves it for removeStaleStaging
        } catch (Exception e) {
            stopQuietly(server);
            deleteTree(staging);
            throw e instanceof IOException io ? io : new IOException("cannot serve " + sock + ": " + e.getMessage(), e);
        }
        return new PluginSocketServer(sock, server);
    }

    public Path socket() {
        return socket;
    }

    /** Removes the socket first (dockerd then sees no plugin), then stops serving. */
    @Override
    public void close() {
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // it goes with the next start's stale-socket check
        }
        stopQuietly(server);
    }

    /** Staging directories of this socket name left by a driver killed while it started (no live one: checked before). */
    private static void removeStaleStaging(Path dir, String prefix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(p -> p.getFileName().toString().startsWith(prefix)).toList()) deleteTree(p);
        }
    }

    private static boolean live(Path sock) {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(sock))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void stopQuietly(Server s) {
        try {
            s.stop();
        } catch (Exception ignored) {
            // stopping is best effort
        }
    }

    private static void deleteTree(Path p) {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) return;
        try (Stream<Path> s = Files.walk(p)) {
            for (Path f : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
        } catch (IOException ignored) {
            // a leftover empty directory is harmless
        }
    }

    /**
     * Jetty's unix-domain connector, refusing every peer but root as it accepts it: the connection is
     * closed before Jetty sees it, and the acceptor goes on at once (Jetty's own accept-failure path
     * would log a warning and pause the acceptor for a second, which a refused user could repeat).
     */
    private static final class RootOnlyConnector extends UnixDomainServerConnector {
        private final UserPrincipal allowed;
        private final PrintStream log;

        RootOnlyConnector(Server server, PluginConnectionFactory factory, UserPrincipal allowed, PrintStream log) {
            super(server, 1, 1, factory);
            this.allowed = allowed;
            this.log = log;
        }

        @Override
        protected void configure(SocketChannel channel) throws IOException {
            Optional<String> refused = PeerCredentials.refused(channel, allowed);
            if (refused.isPresent()) {
                channel.close();
                if (log != null) log.println(Instant.now() + " jcnid docker rejected_peer=\"" + refused.get() + "\"");
                throw new RefusedPeer();
            }
            super.configure(channel);
        }

        @Override
        protected boolean handleAcceptFailure(Throwable failure) {
            return failure instanceof RefusedPeer || super.handleAcceptFailure(failure);
        }
    }

    /** A connection from another user than root, closed already. */
    private static final class RefusedPeer extends IOException {
        RefusedPeer() {
            super("peer refused");
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this; // expected, and possibly frequent: no stack trace to collect
        }
    }

    /** One request: read the body as it arrives (bounded), ask the API, write its JSON. */
    private static final class ApiHandler extends Handler.Abstract {
        private final RemoteApi api;

        ApiHandler(RemoteApi api) {
            this.api = api;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            if (request.getLength() > MAX_BODY) {
                tooLarge(response, callback);
                return true;
            }
            new BodyReader(api, request, response, callback).run();
            return true;
        }
    }

    /**
     * Reads a request body chunk by chunk as Jetty hands them over; when none is there it asks to be
     * called again (demand) and returns, so a client that trickles its body holds no thread. Never
     * more than {@link #MAX_BODY} bytes are kept, whatever Content-Length announced.
     */
    private static final class BodyReader implements Runnable {
        private final RemoteApi api;
        private final Request request;
        private final Response response;
        private final Callback callback;
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();

        BodyReader(RemoteApi api, Request request, Response response, Callback callback) {
            this.api = api;
            this.request = request;
            this.response = response;
            this.callback = callback;
        }

        @Override
        public void run() {
            while (true) {
                Content.Chunk chunk = request.read();
                if (chunk == null) {
                    request.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    callback.failed(chunk.getFailure()); // the connection closed or its deadline passed
                    return;
                }
                ByteBuffer b = chunk.getByteBuffer();
                if (body.size() + b.remaining() > MAX_BODY) {
                    chunk.release();
                    tooLarge(response, callback);
                    return;
                }
                byte[] bytes = new byte[b.remaining()];
                b.get(bytes);
                body.write(bytes, 0, bytes.length);
                boolean last = chunk.isLast();
                chunk.release();
                if (last) {
                    answer();
                    return;
                }
            }
        }

        private void answer() {
            PluginConnectionFactory.PluginConnection conn =
                    request.getConnectionMetaData().getConnection() instanceof PluginConnectionFactory.PluginConnection pc ? pc : null;
            if (conn != null) conn.requestRead();
            RemoteApi.Reply r = api.handle(request.getMethod(), Request.getPathInContext(request), body.toByteArray());
            reply(response, new Callback() {
                @Override
                public void succeeded() {
                    if (conn != null) conn.answered();
                    callback.succeeded();
                }

                @Override
                public void failed(Throwable x) {
                    if (conn != null) conn.answered();
                    callback.failed(x);
                }
            }, r.status(), r.json());
        }
    }

    private static void tooLarge(Response response, Callback callback) {
        reply(response, callback, 413, "{\"Err\":\"jcni: request body larger than " + MAX_BODY + " bytes\"}");
    }

    private static void reply(Response response, Callback callback, int status, String json) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
        Content.Sink.write(response, true, json + "\n", callback);
    }
}
