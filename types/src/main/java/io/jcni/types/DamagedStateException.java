package io.jcni.types;

/**
 * A state document that cannot be read: empty, not JSON, not an object, or a field missing or of
 * the wrong type. The message names the file and the field: "damaged state file PATH: FIELD: PROBLEM",
 * so a truncated or hand-edited file is reported as what it is, never as a bare
 * ClassCastException or JSON error.
 */
public final class DamagedStateException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DamagedStateException(String location, String problem) {
        super("damaged state file " + location + ": " + problem);
    }
}
