package io.jcni.daemon;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Optional;

/**
 * A service jcnid runs beside its plugin socket, found through {@link java.util.ServiceLoader} so
 * that the daemon does not depend on the modules above it (the Docker driver lives in jcni-docker).
 */
public interface DaemonService extends AutoCloseable {

    /** Lines for {@code jcnid status} ("docker_driver jcni /run/docker/plugins/jcni.sock ..."), each ending in '\n'. */
    String status();

    /** Stops serving; idempotent. */
    @Override
    void close();

    /** Starts a service when the configuration asks for it. */
    interface Provider {
        /** @return the running service, or empty when {@code cfg} does not ask for it */
        Optional<DaemonService> start(DaemonConfig cfg, PrintStream log) throws IOException;
    }
}
