package io.jcni.daemon.dhcp;

/** A DHCP exchange that did not end in a lease: no answer in time, a NAK, or an unusable ACK. */
public final class DhcpException extends Exception {
    /**
     * Why: the caller restarts on NAK (RFC 2131 4.4.5), reports the others. UNREADABLE: the only
     * answers were messages the client could not read; ZERO_LEASE: the server granted a lease of
     * no time at all.
     */
    public enum Kind { TIMEOUT, NAK, BAD_ACK, UNREADABLE, ZERO_LEASE }

    private final Kind kind;

    public DhcpException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
