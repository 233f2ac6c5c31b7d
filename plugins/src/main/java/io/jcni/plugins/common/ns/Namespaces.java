package io.jcni.plugins.common.ns;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Netns;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;

/** Opening CNI_NETNS the way the reference plugins report it. */
public final class Namespaces {
    private Namespaces() {}

    /** Opens the container namespace; failure is "failed to open netns". */
    public static Netns open(String path) {
        try {
            return Netns.open(path);
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to open netns \"" + path + "\"", e);
        }
    }

    /** For DEL: the namespace, or null when its path no longer exists (ns.NSPathNotExistErr). */
    public static Netns openIfExists(String path) {
        try {
            return Netns.open(path);
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return null;
            throw new CniException(ErrorCode.INTERNAL, "failed to open netns \"" + path + "\"", e);
        }
    }
}
