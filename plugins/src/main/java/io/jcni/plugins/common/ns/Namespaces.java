package io.jcni.plugins.common.ns;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Netns;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;

/** Opening CNI_NETNS the way the reference plugins report it. */
public final class Namespaces {
    private Namespaces() {}

    /**
     * Opens the container namespace; failure is the reference's: code 999 and, for a path that does
     * not exist, ns.GetNS's words, {@code failed to open netns "P": failed to Statfs "P": no such
     * file or directory}, all in msg as the reference's skel puts a plain Go error there.
     */
    public static Netns open(String path) {
        try {
            return Netns.open(path);
        } catch (ErrnoException e) {
            throw failedToOpen(path, e);
        }
    }

    static CniException failedToOpen(String path, ErrnoException e) {
        String q = "\"" + path + "\"";
        if (e.is(Errno.ENOENT)) {
            return new CniException(ErrorCode.INTERNAL, "failed to open netns " + q + ": failed to Statfs " + q + ": no such file or directory", "", e);
        }
        return new CniException(ErrorCode.INTERNAL, "failed to open netns " + q, e);
    }

    /** For DEL: the namespace, or null when its path no longer exists (ns.NSPathNotExistErr). */
    public static Netns openIfExists(String path) {
        try {
            return Netns.open(path);
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return null;
            throw failedToOpen(path, e);
        }
    }
}
