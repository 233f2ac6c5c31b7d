package io.jcni.docker;

/**
 * The Docker driver cannot start at all: its socket is served by another driver or cannot be made,
 * or its state directory cannot be read. The message says which and where. Damaged state documents
 * are not this: they are moved aside and named in the log, and the driver serves the rest.
 */
public final class DriverStartException extends Exception {
    public DriverStartException(String message, Throwable cause) {
        super(message, cause);
    }
}
