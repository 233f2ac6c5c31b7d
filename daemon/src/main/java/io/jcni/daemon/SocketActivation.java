package io.jcni.daemon;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channel;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;

/**
 * A listening socket handed to jcnid by its service manager (systemd's {@code jcnid.socket}),
 * so the socket exists from boot and the first shim call starts the daemon.
 *
 * <p>The JDK can only adopt an inherited socket on stdin ({@link System#inheritedChannel()}), which
 * is what {@code StandardInput=socket} and inetd do. systemd's native protocol passes it as fd 3
 * with {@code LISTEN_FDS}/{@code LISTEN_PID}; the jcnid launcher script moves that fd to stdin before
 * it execs the JVM (the JVM has no public way to wrap a numbered fd). Only a <em>listening</em> unix
 * socket counts: anything else on stdin (a terminal, /dev/null, a connected socket) means "not activated".
 */
final class SocketActivation {
    private SocketActivation() {}

    /** The inherited listening unix socket and the path it is bound to. */
    record Listener(ServerSocketChannel channel, Path path) {}

    /** The socket this process was activated with, or null when it was started the ordinary way. */
    static Listener inherited() {
        Channel c;
        try {
            c = System.inheritedChannel();
        } catch (IOException | SecurityException e) {
            return null;
        }
        if (!(c instanceof ServerSocketChannel server)) return null;
        try {
            SocketAddress a = server.getLocalAddress();
            if (a instanceof UnixDomainSocketAddress u && !u.getPath().toString().isEmpty()) {
                return new Listener(server, u.getPath().toAbsolutePath());
            }
        } catch (IOException e) {
            // not a usable listener
        }
        return null;
    }
}
