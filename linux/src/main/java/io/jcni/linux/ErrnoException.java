package io.jcni.linux;

/**
 * A failed system call or netlink request: carries the errno, its symbolic name and the operation,
 * e.g. {@code add link veth0: EEXIST (File exists)}.
 *
 * <p>Unchecked on purpose: plugin code mostly runs inside lambdas handed to {@link Netns#run},
 * and a checked exception would force wrapping at every step. Callers that care test
 * {@link #errno()} against the constants in {@link Errno}.
 */
public class ErrnoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int errno;
    private final String operation;
    private final String detail;

    /** Called by libjcni; keep the signature in sync with jcni.c. */
    public ErrnoException(int errno, String operation) {
        this(errno, operation, null, null);
    }

    /**
     * @param detail the kernel's extended ACK message (e.g. "Invalid MTU"), or null
     * @param cause the lower-level exception this one restates with more context, or null
     */
    public ErrnoException(int errno, String operation, String detail, Throwable cause) {
        super(format(errno, operation, detail), cause);
        this.errno = errno;
        this.operation = operation;
        this.detail = detail;
    }

    private static String format(int errno, String operation, String detail) {
        String s = operation + ": " + Errno.name(errno) + " (" + Errno.message(errno) + ")";
        return detail == null || detail.isEmpty() ? s : s + ": " + detail;
    }

    public int errno() {
        return errno;
    }

    /** The symbolic name, e.g. "ENODEV". */
    public String errnoName() {
        return Errno.name(errno);
    }

    public String operation() {
        return operation;
    }

    /** The kernel's extended ACK text, or null. */
    public String detail() {
        return detail;
    }

    public boolean is(int errno) {
        return this.errno == errno;
    }

    /** The same error restated for a higher-level operation; keeps this one as the cause. */
    public ErrnoException during(String operation) {
        return new ErrnoException(errno, operation, detail, this);
    }
}
