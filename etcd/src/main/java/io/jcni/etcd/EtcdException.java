package io.jcni.etcd;

import java.io.IOException;

/** etcd answered, with an error (as opposed to an IOException: it could not be reached). */
public final class EtcdException extends IOException {
    public EtcdException(String message) {
        super(message);
    }
}
