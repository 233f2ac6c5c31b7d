package io.jcni.etcd;

import java.io.IOException;
import java.util.List;

/** etcd answered, with an error (as opposed to an IOException: it could not be reached). */
public final class EtcdException extends IOException {
    /**
     * Errors with which etcd gives up on a request without judging it: its proposal timed out or
     * lost its leader, it sheds load, it stops, or the request's context ended inside etcd (seen
     * under load as "context canceled" on a txn whose client was still waiting). The same request
     * may succeed when sent again.
     */
    private static final List<String> GAVE_UP = List.of("etcdserver: request timed out", "etcdserver: leader changed",
            "etcdserver: no leader", "etcdserver: too many requests", "etcdserver: server stopped", "context canceled",
            "context deadline exceeded");

    private final boolean transientFailure;

    public EtcdException(String message) {
        this(message, false);
    }

    private EtcdException(String message, boolean transientFailure) {
        super(message);
        this.transientFailure = transientFailure;
    }

    /** etcd's {@code error} in its answer to a request to {@code where} (endpoint and path). */
    public static EtcdException answered(String where, String error) {
        return new EtcdException(where + ": " + error, gaveUp(error));
    }

    static boolean gaveUp(String error) {
        for (String s : GAVE_UP) if (error.contains(s)) return true;
        return false;
    }

    /**
     * Whether etcd gave up on the request rather than refusing it: sending it again may succeed.
     * A change may have been applied all the same (a timed-out proposal can still commit), so only
     * a caller whose requests may be repeated should.
     */
    public boolean isTransient() {
        return transientFailure;
    }
}
