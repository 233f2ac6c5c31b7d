package io.jcni.docker.store;

import io.jcni.docker.api.DriverException;

/**
 * A state document that cannot be read: not JSON, or a field missing, of the wrong type or not
 * parseable. The message names the file: "damaged state file PATH: FIELD: PROBLEM".
 */
public final class DamagedStateException extends DriverException {
    public DamagedStateException(String location, String problem) {
        super("damaged state file " + location + ": " + problem);
    }
}
