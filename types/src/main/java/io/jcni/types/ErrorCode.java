package io.jcni.types;

/** The well-known CNI error codes (SPEC.md "Error"); plugins may use others from 100 on. */
public enum ErrorCode {
    INCOMPATIBLE_VERSION(1, "Incompatible CNI version"),
    UNSUPPORTED_FIELD(2, "Unsupported field in network configuration"),
    UNKNOWN_CONTAINER(3, "Container unknown or does not exist"),
    INVALID_ENVIRONMENT(4, "Invalid necessary environment variables"),
    IO_FAILURE(5, "I/O failure"),
    DECODING_FAILURE(6, "Failed to decode content"),
    INVALID_NETWORK_CONFIG(7, "Invalid network config"),
    INVALID_NETNS(8, "Invalid network namespace"),
    TRY_AGAIN_LATER(11, "Try again later"),
    PLUGIN_NOT_AVAILABLE(50, "The plugin is not available"),
    LIMITED_CONNECTIVITY(51, "The plugin is not available; existing containers may have limited connectivity"),
    INTERNAL(999, "Internal error");

    private final int code;
    private final String meaning;

    ErrorCode(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    public int code() {
        return code;
    }

    public String meaning() {
        return meaning;
    }

    /** The known code for a number, or null for a plugin-specific one. */
    public static ErrorCode of(int code) {
        for (ErrorCode c : values()) if (c.code == code) return c;
        return null;
    }
}
