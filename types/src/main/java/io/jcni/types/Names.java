package io.jcni.types;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The rules for the names that reach plugins from outside, in one place for the skeleton, the
 * runtime, the daemon and the CLI. They are the reference's (libcni's pkg/utils): what it accepts,
 * jcni accepts, so a name never passes one path and fails another.
 *
 * <p>Container IDs and network names both use the reference's character set, ASCII only, which also
 * makes them safe in file names, link aliases and nft strings whatever the JVM's locale.
 */
public final class Names {

    /** libcni's cniValidNameChars: a letter or digit, then letters, digits, '_', '.' and '-'. */
    private static final Pattern CNI_NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.\\-]*");
    /** Linux IFNAMSIZ is 16 bytes including the terminating NUL. */
    public static final int MAX_IFNAME_BYTES = 15;

    private Names() {}

    /** Whether {@code s} is made of the reference's name characters (container IDs, network names). */
    public static boolean isCniName(String s) {
        return s != null && CNI_NAME.matcher(s).matches();
    }

    /** CNI_CONTAINERID: code 4 when it holds anything but the reference's characters. */
    public static void checkContainerId(String id) {
        if (id == null || id.isEmpty()) throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "missing containerID");
        if (!CNI_NAME.matcher(id).matches()) {
            throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "invalid characters in containerID", id);
        }
    }

    /** A network's {@code name}: code 7 when missing or holding anything but the reference's characters. */
    public static void checkNetworkName(String name) {
        if (name == null || name.isEmpty()) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "missing network name");
        if (!CNI_NAME.matcher(name).matches()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid characters found in network name", name);
        }
    }

    /** CNI_IFNAME: the reference's rules plus printable ASCII ({@link #interfaceNameProblem}); code 4. */
    public static void checkInterfaceName(String name) {
        String why = interfaceNameProblem(name);
        if (why != null) throw new CniException(ErrorCode.INVALID_ENVIRONMENT, "invalid interface name", why);
    }

    /**
     * An interface name given in a config (a bridge's {@code bridge}, a prevResult's interface name):
     * the same rules as {@link #checkInterfaceName}, but code 7 since it comes from the config.
     *
     * @param key the config key, for the message
     */
    public static void checkConfigInterfaceName(String key, String name) {
        String why = interfaceNameProblem(name);
        if (why != null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid " + key, why);
    }

    /**
     * Why {@code name} cannot be an interface name, or null when it can: the reference's rules (1 to
     * 15 bytes, not '.' or '..', no '/', ':' or whitespace), and, stricter, printable ASCII only
     * and no '%'.
     * The kernel takes any other byte, but jcni would then depend on the locale: interface names
     * become parts of file paths (sysctl, the result cache), which the JVM encodes by the locale it
     * was started with, so a name could work through jcnid and fail in the standalone plugin.
     *
     * <p>Also stricter: no '%'. The kernel expands a {@code %d} in a new link's name to the first
     * free number ({@code eth%d} becomes {@code eth0}), so the link would not have the name the
     * runtime gave: the plugin could not find it again by that name (jcnid once leaked the host
     * veth of such an ADD), the result would name an interface that does not exist, and DEL, which
     * gets the same {@code eth%d}, could not tell which link is the attachment's. The reference
     * accepts '%' and creates a link of a kernel-chosen name that its own DEL cannot reliably find.
     */
    public static String interfaceNameProblem(String name) {
        if (name == null || name.isEmpty()) return "interface name is empty";
        String shown = "\"" + printable(name) + "\" ";
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_IFNAME_BYTES) {
            return shown + "is longer than " + MAX_IFNAME_BYTES + " bytes";
        }
        if (name.equals(".") || name.equals("..")) return shown + "may not be '.' or '..'";
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == ':' || c == ' ' || (c >= '\t' && c <= '\r')) return shown + "may not contain '/', ':' or whitespace";
            if (c < 0x20 || c >= 0x7F) return shown + "may hold only printable ASCII characters";
            if (c == '%') return shown + "may not contain '%' (the kernel would choose the name)";
        }
        return null;
    }

    /**
     * {@code name} when it has at most {@code max} characters, else its first 64, '~' and its
     * SHA-256 in hex: deterministic, unique in practice, and short enough for a file name or a
     * link alias, for the container IDs and network names of any length that the reference accepts.
     */
    public static String shortened(String name, int max) {
        if (name.length() <= max) return name;
        return name.substring(0, Math.min(64, max)) + "~" + sha256Hex(name);
    }

    /** The SHA-256 of {@code s} (UTF-8), in lower-case hex. */
    public static String sha256Hex(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code s} with control characters escaped, for error messages. */
    public static String printable(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7F) sb.append(String.format("\\x%02x", (int) c));
            else sb.append(c);
        }
        return sb.toString();
    }
}
