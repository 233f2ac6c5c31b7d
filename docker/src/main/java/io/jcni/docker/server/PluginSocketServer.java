package io.jcni.docker.server;

import io.jcni.docker.api.RemoteApi;
import java.io.IOException;
import java.io.InputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
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
 * to its public name, so there is no moment at which another user could connect.
 */
public final class PluginSocketServer implements AutoCloseable {
    /** libnetwork's payloads are a few KiB; anything near this is not dockerd. */
    static final int MAX_BODY = 1 << 20;
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
        UnixDomainServerConnector c = new UnixDomainServerConnector(server, 1, 1, new BlankHostTolerantFactory(http));
        c.setUnixDomainPath(tmp);
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

    /** One request: read the body (bounded), ask the API, write its JSON. */
    private static final class ApiHandler extends Handler.Abstract {
        private final RemoteApi api;

        ApiHandler(RemoteApi api) {
            this.api = api;
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception {
            byte[] body;
            long declared = request.getLength();
            if (declared > MAX_BODY) {
                reply(response, callback, 413, "{\"Err\":\"jcni: request body larger than " + MAX_BODY + " bytes\"}");
                return true;
            }
            try (InputStream in = Content.Source.asInputStream(request)) {
                body = in.readNBytes(MAX_BODY + 1);
            }
            if (body.length > MAX_BODY) {
                reply(response, callback, 413, "{\"Err\":\"jcni: request body larger than " + MAX_BODY + " bytes\"}");
                return true;
            }
            RemoteApi.Reply r = api.handle(request.getMethod(), Request.getPathInContext(request), body);
            reply(response, callback, r.status(), r.json());
            return true;
        }

        private static void reply(Response response, Callback callback, int status, String json) {
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
            Content.Sink.write(response, true, json + "\n", callback);
        }
    }
}
