package io.jcni.etcd;

import java.io.IOException;

/**
 * The TLS handshake or etcd's authentication failed, or the client's own certificate files are
 * unusable: retrying the same thing will fail the same way until someone fixes a file, a password
 * or an endpoint, so callers report it every time (not only the first) and say what is wrong.
 */
public final class EtcdAuthException extends IOException {
    public EtcdAuthException(String message) {
        super(message);
    }

    public EtcdAuthException(String message, Throwable cause) {
        super(message, cause);
    }
}
