package io.jcni.daemon;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/** Before a daemon binds its unix socket: what may already be at the path. */
public final class StaleSocket {
    private StaleSocket() {}

    /**
     * Removes a socket left at {@code socket} by a daemon that was killed. Refuses (IOException) when
     * a live daemon answers there, or when the path is not a socket: a file someone put there is
     * not ours to delete.
     */
    public static void removeIfStale(Path socket) throws IOException {
        if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) return;
        int mode = (Integer) Files.getAttribute(socket, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if ((mode & 0170000) != 0140000) throw new IOException(socket + " exists and is not a socket");
        boolean live;
        try (SocketChannel probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            live = true;
        } catch (IOException e) {
            live = false;
        }
        if (live) throw new IOException("another daemon is serving " + socket);
        Files.delete(socket);
    }
}
