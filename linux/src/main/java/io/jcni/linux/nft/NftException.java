package io.jcni.linux.nft;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;

/** nft failed: carries its exit status and what it printed on stderr; or the kernel refused a netlink change ({@link #errno}). */
public final class NftException extends RuntimeException {
    private final int exitCode;
    private final String stderr;

    private final int errno;

    public NftException(String op, int exitCode, String stderr) {
        super(op + " failed (exit " + exitCode + "): " + stderr.strip());
        this.exitCode = exitCode;
        this.stderr = stderr;
        this.errno = 0;
    }

    /** The kernel refused a change sent over netlink ({@link NfTables}); {@link #errno} says why. */
    public NftException(ErrnoException e) {
        super("nftables: " + e.getMessage() + hint(e.errno()), e);
        this.exitCode = -1;
        this.stderr = e.getMessage();
        this.errno = e.errno();
    }

    private static String hint(int errno) {
        return switch (errno) {
            case Errno.ENOENT -> " (the table, set or element is not there)";
            case Errno.EBUSY, Errno.EEXIST -> " (the element exists; for a map key: with another value)";
            case Errno.EPERM -> " (needs CAP_NET_ADMIN in the network namespace)";
            default -> "";
        };
    }

    /** The errno of a change refused over netlink, 0 for a failed nft run. */
    public int errno() {
        return errno;
    }

    public int exitCode() {
        return exitCode;
    }

    public String stderr() {
        return stderr;
    }
}
