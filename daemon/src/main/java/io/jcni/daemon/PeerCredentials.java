package io.jcni.daemon;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.attribute.UserPrincipal;
import java.util.Optional;
import jdk.net.ExtendedSocketOptions;

/**
 * The check jcnid's unix sockets make on every connection: the kernel's word on who connected
 * (SO_PEERCRED), compared with the one user the socket serves. File modes keep others from
 * connecting in the first place; this holds even when someone opens the modes up.
 */
public final class PeerCredentials {
    private PeerCredentials() {}

    /** uid 0, as SO_PEERCRED reports it. */
    public static UserPrincipal root() throws IOException {
        return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("0");
    }

    /** Empty when the peer of {@code ch} is {@code allowed}; else the peer's user name (for the log line that refuses it). */
    public static Optional<String> refused(SocketChannel ch, UserPrincipal allowed) throws IOException {
        UserPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED).user();
        return allowed.equals(peer) ? Optional.empty() : Optional.of(peer.getName());
    }
}
