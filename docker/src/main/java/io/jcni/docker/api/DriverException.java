package io.jcni.docker.api;

/**
 * A refusal to carry out a driver call, with a message meant for the Docker user: dockerd prints it
 * after "Error response from daemon:". Bad payloads, unknown IDs and failed CNI operations all end here.
 */
public class DriverException extends RuntimeException {
    public DriverException(String message) {
        super(message);
    }

    public DriverException(String message, Throwable cause) {
        super(message, cause);
    }
}
