package io.jcni.plugins.common;

import io.jcni.linux.ErrnoException;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.util.function.Supplier;

/**
 * The one place a failed kernel call becomes a CNI error: code 999 (as the reference plugins answer),
 * the caller's message, the kernel's error as details, and the {@link ErrnoException} kept as the
 * cause. {@code kernel("failed to set up hairpin mode for " + name, () -> rt.setHairpin(i, on))}
 * replaces a try/catch around each call.
 */
public final class Kernel {
    private Kernel() {}

    /** Runs {@code call}; a kernel error becomes "msg: error". */
    public static <T> T kernel(String msg, Supplier<T> call) {
        try {
            return call.get();
        } catch (ErrnoException e) {
            throw failed(msg, e);
        }
    }

    /** Runs {@code call}; a kernel error becomes "msg: error". */
    public static void kernel(String msg, Runnable call) {
        try {
            call.run();
        } catch (ErrnoException e) {
            throw failed(msg, e);
        }
    }

    /** As {@link #kernel(String, Runnable)}, but {@code ignored} (e.g. EEXIST) is success. */
    public static void kernelIgnoring(int ignored, String msg, Runnable call) {
        try {
            call.run();
        } catch (ErrnoException e) {
            if (!e.is(ignored)) throw failed(msg, e);
        }
    }

    /** The CNI error for a kernel error, for the few callers that must look at the errno first. */
    public static CniException failed(String msg, ErrnoException e) {
        return new CniException(ErrorCode.INTERNAL, msg, e);
    }
}
