package io.jcni.daemon;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * A long-running service jcnid can host beside its plugin socket, enabled by a flag of
 * {@code jcnid start} (the overlay agent: {@code --overlay}; the Docker driver:
 * {@code --docker-driver NAME}). Implementations live in higher modules and are found with
 * {@link java.util.ServiceLoader}, so the daemon knows none of them and a jcnid without them on its
 * classpath simply does not accept their flags.
 */
public interface DaemonService {
    /** The flag that turns the service on, e.g. {@code --overlay}; it may also be one of {@link #valueFlags}. */
    String enableFlag();

    /** The service's flags that take a value (e.g. {@code --etcd-endpoints}). */
    Set<String> valueFlags();

    /** The service's flags without a value (e.g. {@code --ip-masq}). */
    Set<String> switchFlags();

    /**
     * Starts the service with the flags given to jcnid that belong to it (in order, values
     * following their flag) and returns at once. Throws {@link IllegalArgumentException} for bad flags.
     */
    Running start(List<String> args, PrintStream log) throws Exception;

    /**
     * Runs the service once as its clients would, for jcnid's AOT cache ({@link DaemonTraining}):
     * started on scratch directories under {@code scratch} (never the node's own), called, stopped.
     * What it loads and links then is already loaded when a jcnid with the cache starts the service,
     * which is what keeps a service's start off jcnid's start-up time. Nothing by default; a
     * training failure only makes the cache smaller.
     */
    default void train(Path scratch, PrintStream log) throws Exception {}

    /** A started service. */
    interface Running extends AutoCloseable {
        /** Lines for {@code jcni daemon status} ("docker_driver jcni /run/docker/plugins/jcni.sock"), each ending in '\n'. */
        String status();

        /**
         * Why the service has stopped serving although it runs (its accept loop died or hangs, its
         * work is not taken up), or null while it serves: for {@code jcni daemon status} to show
         * as a stalled service.
         */
        default String stalled() {
            return null;
        }

        /** A clean shutdown (e.g. the overlay releases its lease); idempotent. */
        @Override
        void close() throws Exception;
    }
}
