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

    /** Whether nft reported ENOENT (a table, set or element that is not there). */
    public boolean isNotFound() {
        return stderr.contains("No such file or directory");
    }

    /** Whether nft reported EEXIST (e.g. a map key already bound to another value). */
    public boolean isExists() {
        return stderr.contains("File exists");
    }
}
