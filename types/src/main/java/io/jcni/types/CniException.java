package io.jcni.types;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A CNI error: a numeric code, a short message and optional details, exactly what a plugin prints
 * on stdout when it fails ({@code {"cniVersion":..., "code":7, "msg":..., "details":...}}).
 */
public class CniException extends RuntimeException {
    private final int code;
    private final String msg;
    private final String details;

    public CniException(int code, String msg, String details) {
        super(details == null || details.isEmpty() ? msg : msg + ": " + details);
        this.code = code;
        this.msg = msg;
        this.details = details == null ? "" : details;
    }

    public CniException(ErrorCode code, String msg, String details) {
        this(code.code(), msg, details);
    }

    public CniException(ErrorCode code, String msg) {
        this(code.code(), msg, "");
    }

    /** The error {@code cause} amounts to: its message becomes the details, and it stays the cause. */
    public CniException(ErrorCode code, String msg, Throwable cause) {
        this(code, msg, cause.getMessage(), cause);
    }

    /** An error with details of its own, keeping the exception that caused it. */
    public CniException(ErrorCode code, String msg, String details, Throwable cause) {
        this(code.code(), msg, details, cause);
    }

    /** As above, with a numeric code (e.g. a delegate's). */
    public CniException(int code, String msg, String details, Throwable cause) {
        this(code, msg, details);
        initCause(cause);
    }

    public int code() {
        return code;
    }

    public String msg() {
        return msg;
    }

    public String details() {
        return details;
    }

    /** The spec's error object; {@code cniVersion} may be null when the version is not known yet. */
    public Map<String, Object> toJson(String cniVersion) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (cniVersion != null) m.put("cniVersion", cniVersion);
        m.put("code", (long) code);
        m.put("msg", msg);
        if (!details.isEmpty()) m.put("details", details);
        return m;
    }

    /** Reads a plugin's error object; anything without a numeric code is not one. */
    public static CniException fromJson(Map<String, Object> m) {
        if (!(m.get("code") instanceof Number n)) return null;
        String msg = m.get("msg") instanceof String s ? s : "";
        String details = m.get("details") instanceof String s ? s : "";
        return new CniException(n.intValue(), msg, details);
    }
}
