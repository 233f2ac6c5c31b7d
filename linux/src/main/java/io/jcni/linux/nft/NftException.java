package io.jcni.linux.nft;

/** nft failed: carries its exit status and what it printed on stderr. */
public final class NftException extends RuntimeException {
    private final int exitCode;
    private final String stderr;

    public NftException(String op, int exitCode, String stderr) {
        super(op + " failed (exit " + exitCode + "): " + stderr.strip());
        this.exitCode = exitCode;
        this.stderr = stderr;
    }

    public int exitCode() {
        return exitCode;
    }

    public String stderr() {
        return stderr;
    }
}
