package io.jcni.linux;

/**
 * Linux errno numbers, their symbolic names and libc messages.
 *
 * <p>The table lives in Java (not only in libjcni) so that error decoding, e.g. of a netlink
 * NLMSG_ERROR, works and is testable without the native library. Numbers are the x86-64 and
 * arm64 (asm-generic) values.
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int ESRCH = 3;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int ENOTDIR = 20;
    public static final int EINVAL = 22;
    public static final int ENOTTY = 25;
    public static final int EFBIG = 27;
    public static final int ERANGE = 34;
    public static final int ENOSYS = 38;
    public static final int ENODATA = 61;
    public static final int EMSGSIZE = 90;
    public static final int EPROTONOSUPPORT = 93;
    public static final int EOPNOTSUPP = 95;
    public static final int EAFNOSUPPORT = 97;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ENOBUFS = 105;
    public static final int ETIMEDOUT = 110;
    public static final int EHOSTUNREACH = 113;

    /** Pairs of (name, message) for errno 1..133; an empty name marks an unused number. */
    private static final String[] TABLE = {
            "EPERM", "Operation not permitted",
            "ENOENT", "No such file or directory",
            "ESRCH", "No such process",
            "EINTR", "Interrupted system call",
            "EIO", "Input/output error",
            "ENXIO", "No such device or address",
            "E2BIG", "Argument list too long",
            "ENOEXEC", "Exec format error",
            "EBADF", "Bad file descriptor",
            "ECHILD", "No child processes",
            "EAGAIN", "Resource temporarily unavailable",
            "ENOMEM", "Cannot allocate memory",
            "EACCES", "Permission denied",
            "EFAULT", "Bad address",
            "ENOTBLK", "Block device required",
            "EBUSY", "Device or resource busy",
            "EEXIST", "File exists",
            "EXDEV", "Invalid cross-device link",
            "ENODEV", "No such device",
            "ENOTDIR", "Not a directory",
            "EISDIR", "Is a directory",
            "EINVAL", "Invalid argument",
            "ENFILE", "Too many open files in system",
            "EMFILE", "Too many open files",
            "ENOTTY", "Inappropriate ioctl for device",
            "ETXTBSY", "Text file busy",
            "EFBIG", "File too large",
            "ENOSPC", "No space left on device",
            "ESPIPE", "Illegal seek",
            "EROFS", "Read-only file system",
            "EMLINK", "Too many links",
            "EPIPE", "Broken pipe",
            "EDOM", "Numerical argument out of domain",
            "ERANGE", "Numerical result out of range",
            "EDEADLK", "Resource deadlock avoided",
            "ENAMETOOLONG", "File name too long",
            "ENOLCK", "No locks available",
            "ENOSYS", "Function not implemented",
            "ENOTEMPTY", "Directory not empty",
            "ELOOP", "Too many levels of symbolic links",
            "", "Unknown error 41",
            "ENOMSG", "No message of desired type",
            "EIDRM", "Identifier removed",
            "ECHRNG", "Channel number out of range",
            "EL2NSYNC", "Level 2 not synchronized",
            "EL3HLT", "Level 3 halted",
            "EL3RST", "Level 3 reset",
            "ELNRNG", "Link number out of range",
            "EUNATCH", "Protocol driver not attached",
            "ENOCSI", "No CSI structure available",
            "EL2HLT", "Level 2 halted",
            "EBADE", "Invalid exchange",
            "EBADR", "Invalid request descriptor",
            "EXFULL", "Exchange full",
            "ENOANO", "No anode",
            "EBADRQC", "Invalid request code",
            "EBADSLT", "Invalid slot",
            "", "Unknown error 58",
            "EBFONT", "Bad font file format",
            "ENOSTR", "Device not a stream",
            "ENODATA", "No data available",
            "ETIME", "Timer expired",
            "ENOSR", "Out of streams resources",
            "ENONET", "Machine is not on the network",
            "ENOPKG", "Package not installed",
            "EREMOTE", "Object is remote",
            "ENOLINK", "Link has been severed",
            "EADV", "Advertise error",
            "ESRMNT", "Srmount error",
            "ECOMM", "Communication error on send",
            "EPROTO", "Protocol error",
            "EMULTIHOP", "Multihop attempted",
            "EDOTDOT", "RFS specific error",
            "EBADMSG", "Bad message",
            "EOVERFLOW", "Value too large for defined data type",
            "ENOTUNIQ", "Name not unique on network",
            "EBADFD", "File descriptor in bad state",
            "EREMCHG", "Remote address changed",
            "ELIBACC", "Can not access a needed shared library",
            "ELIBBAD", "Accessing a corrupted shared library",
            "ELIBSCN", ".lib section in a.out corrupted",
            "ELIBMAX", "Attempting to link in too many shared libraries",
            "ELIBEXEC", "Cannot exec a shared library directly",
            "EILSEQ", "Invalid or incomplete multibyte or wide character",
            "ERESTART", "Interrupted system call should be restarted",
            "ESTRPIPE", "Streams pipe error",
            "EUSERS", "Too many users",
            "ENOTSOCK", "Socket operation on non-socket",
            "EDESTADDRREQ", "Destination address required",
            "EMSGSIZE", "Message too long",
            "EPROTOTYPE", "Protocol wrong type for socket",
            "ENOPROTOOPT", "Protocol not available",
            "EPROTONOSUPPORT", "Protocol not supported",
            "ESOCKTNOSUPPORT", "Socket type not supported",
            "EOPNOTSUPP", "Operation not supported",
            "EPFNOSUPPORT", "Protocol family not supported",
            "EAFNOSUPPORT", "Address family not supported by protocol",
            "EADDRINUSE", "Address already in use",
            "EADDRNOTAVAIL", "Cannot assign requested address",
            "ENETDOWN", "Network is down",
            "ENETUNREACH", "Network is unreachable",
            "ENETRESET", "Network dropped connection on reset",
            "ECONNABORTED", "Software caused connection abort",
            "ECONNRESET", "Connection reset by peer",
            "ENOBUFS", "No buffer space available",
            "EISCONN", "Transport endpoint is already connected",
            "ENOTCONN", "Transport endpoint is not connected",
            "ESHUTDOWN", "Cannot send after transport endpoint shutdown",
            "ETOOMANYREFS", "Too many references: cannot splice",
            "ETIMEDOUT", "Connection timed out",
            "ECONNREFUSED", "Connection refused",
            "EHOSTDOWN", "Host is down",
            "EHOSTUNREACH", "No route to host",
            "EALREADY", "Operation already in progress",
            "EINPROGRESS", "Operation now in progress",
            "ESTALE", "Stale file handle",
            "EUCLEAN", "Structure needs cleaning",
            "ENOTNAM", "Not a XENIX named type file",
            "ENAVAIL", "No XENIX semaphores available",
            "EISNAM", "Is a named type file",
            "EREMOTEIO", "Remote I/O error",
            "EDQUOT", "Disk quota exceeded",
            "ENOMEDIUM", "No medium found",
            "EMEDIUMTYPE", "Wrong medium type",
            "ECANCELED", "Operation canceled",
            "ENOKEY", "Required key not available",
            "EKEYEXPIRED", "Key has expired",
            "EKEYREVOKED", "Key has been revoked",
            "EKEYREJECTED", "Key was rejected by service",
            "EOWNERDEAD", "Owner died",
            "ENOTRECOVERABLE", "State not recoverable",
            "ERFKILL", "Operation not possible due to RF-kill",
            "EHWPOISON", "Memory page has hardware error",
    };

    private Errno() {}

    /** The symbolic name, e.g. "EEXIST", or "E&lt;n&gt;" for a number Linux does not define. */
    public static String name(int errno) {
        int i = (errno - 1) * 2;
        if (errno >= 1 && i < TABLE.length && !TABLE[i].isEmpty()) return TABLE[i];
        return "E" + errno;
    }

    /** The libc message, e.g. "File exists". */
    public static String message(int errno) {
        int i = (errno - 1) * 2;
        if (errno >= 1 && i < TABLE.length && !TABLE[i].isEmpty()) return TABLE[i + 1];
        return "Unknown error " + errno;
    }

    /** The number for a symbolic name, or -1. */
    public static int byName(String name) {
        for (int i = 0; i < TABLE.length; i += 2) {
            if (TABLE[i].equals(name)) return i / 2 + 1;
        }
        return -1;
    }
}
