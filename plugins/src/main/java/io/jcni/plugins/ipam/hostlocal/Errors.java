package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.nio.file.FileSystemException;

/**
 * The CNI errors host-local raises. Messages repeat the reference plugin's wording
 * (containernetworking/plugins {@code plugins/ipam/host-local}) so tools and humans that grep for
 * them keep working; the codes are jcni's choice (upstream answers 999 for nearly everything):
 * 7 for a bad config, 4 for bad CNI_ARGS, 5 for I/O, 11 when addresses are used up or taken.
 */
final class Errors {
    private Errors() {}

    static CniException config(String msg) {
        return new CniException(ErrorCode.INVALID_NETWORK_CONFIG, msg);
    }

    /** A transient shortage: the runtime may retry once addresses are released. */
    static CniException tryAgain(String msg) {
        return new CniException(ErrorCode.TRY_AGAIN_LATER, msg);
    }

    static CniException io(IOException e) {
        String what = e instanceof FileSystemException fse && fse.getFile() != null
                ? fse.getFile() + ": " + (fse.getReason() != null ? fse.getReason() : e.getClass().getSimpleName())
                : String.valueOf(e.getMessage());
        return withCause(new CniException(ErrorCode.IO_FAILURE, what), e);
    }

    /** The same error, its message prefixed as upstream wraps errors ({@code "...: " + inner}). */
    static CniException prefixed(String prefix, CniException e) {
        return withCause(new CniException(e.code(), prefix + e.msg(), e.details()), e);
    }

    static CniException withCause(CniException e, Throwable cause) {
        e.initCause(cause);
        return e;
    }
}
