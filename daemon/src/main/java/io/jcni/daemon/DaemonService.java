package io.jcni.daemon;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/**
 * A long-running service jcnid can host beside its plugin socket, enabled by a flag of
 * {@code jcnid start} (the overlay agent: {@code --overlay}). Implementations live in higher modules
 * and are found with {@link java.util.ServiceLoader}, so the daemon knows none of them and a jcnid
 * without them on its classpath simply does not accept their flags.
 */
public interface DaemonService {
    /** The flag that turns the service on, e.g. {@code --overlay}. */
    String enableFlag();

    /** The service's other flags that take a value (e.g. {@code --etcd-endpoints}). */
    Set<String> valueFlags();

    /** The service's other flags without a value (e.g. {@code --ip-masq}). */
    Set<String> switchFlags();

    /**
     * Starts the service with the flags given to jcnid that belong to it (in order, values
     * following their flag) and returns at once; closing the handle is a clean shutdown.
     * Throws {@link IllegalArgumentException} for bad flags.
     */
    AutoCloseable start(List<String> args, PrintStream log) throws Exception;
}
