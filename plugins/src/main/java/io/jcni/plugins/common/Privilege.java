package io.jcni.plugins.common;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.SmallFile;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.nio.file.Path;

/**
 * Whether a failure is the caller's missing privilege rather than a fault: a plugin run without
 * CAP_NET_ADMIN (a user running {@code jcni add} without sudo) meets EPERM at its first kernel
 * call, and "internal error ... EPERM" tells that user nothing. Judged only after a failure, so a
 * successful call never reads /proc.
 */
public final class Privilege {
    private Privilege() {}

    /** CAP_NET_ADMIN's bit in /proc/self/status' CapEff (linux/capability.h). */
    static final int CAP_NET_ADMIN = 12;

    public static final String MUST_BE_ROOT = "must run as root (needs CAP_NET_ADMIN)";

    /**
     * The error to answer for {@code t}: "must run as root" (code 999, as the reference's EPERM errors)
     * with the original error as details, when an EPERM or EACCES from the kernel caused it and this
     * process lacks CAP_NET_ADMIN; otherwise null.
     */
    public static CniException unprivileged(Throwable t, String original) {
        if (!causedByPermission(t) || hasNetAdmin(readStatus())) return null;
        return new CniException(ErrorCode.INTERNAL, MUST_BE_ROOT, original, t);
    }

    static boolean causedByPermission(Throwable t) {
        // Bounded: a cause chain can be cyclic (Throwable.getCause already hides a cause that is the throwable itself).
        Throwable c = t;
        for (int depth = 0; c != null && depth < 32; depth++, c = c.getCause()) {
            if (c instanceof ErrnoException e && (e.errno() == Errno.EPERM || e.errno() == Errno.EACCES)) return true;
        }
        return false;
    }

    private static String readStatus() {
        try {
            return SmallFile.readUtf8(Path.of("/proc/self/status"), 1 << 16);
        } catch (RuntimeException e) {
            return "";
        }
    }

    /** Whether a /proc/PID/status text grants CAP_NET_ADMIN; true when it cannot be told (no claim then). */
    static boolean hasNetAdmin(String status) {
        for (String line : status.split("\n")) {
            if (!line.startsWith("CapEff:")) continue;
            try {
                return (Long.parseUnsignedLong(line.substring(7).strip(), 16) >>> CAP_NET_ADMIN & 1) != 0;
            } catch (NumberFormatException e) {
                return true;
            }
        }
        return true;
    }
}
