package io.jcni.linux.nft;

import java.util.regex.Pattern;

/**
 * How names from configs and results become nft script text. Nothing reaches a script unchecked:
 * a name is either written as a quoted string nft reads back literally, or refused.
 */
public final class NftSyntax {
    /** What a chain name must look like before nft is even asked (nft cannot quote chain names). */
    private static final Pattern CHAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_-]{0,63}");
    /** nft's keywords are all lower case; a name with a capital letter can never be one. */
    private static final Pattern HAS_CAPITAL = Pattern.compile(".*[A-Z].*");

    private NftSyntax() {}

    /**
     * An interface name as an nft string literal. nft reads a trailing {@code *} as a wildcard
     * ({@code "br*"} would match every br... interface), so it is escaped; '"', '\' and anything
     * but printable ASCII cannot be written literally and are refused.
     *
     * @throws IllegalArgumentException for a name nft cannot take literally
     */
    public static String ifname(String name) {
        if (name == null || name.isEmpty() || name.length() > 15) throw new IllegalArgumentException("bad interface name for nft: " + name);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c <= ' ' || c >= 0x7F || c == '"' || c == '\\') {
                throw new IllegalArgumentException("interface name \"" + name + "\" cannot be written in an nft script");
            }
        }
        return "\"" + (name.endsWith("*") ? name.substring(0, name.length() - 1) + "\\*" : name) + "\"";
    }

    /**
     * Whether {@code name} has the shape of a chain name; it may still be an nft keyword
     * ({@link #mayBeKeyword}), which nft refuses as a chain name since it cannot quote one.
     */
    public static boolean isChainShaped(String name) {
        return name != null && CHAIN.matcher(name).matches();
    }

    /** False when {@code name} certainly is no nft keyword (it has a capital letter). */
    public static boolean mayBeKeyword(String name) {
        return !HAS_CAPITAL.matcher(name).matches();
    }

    /**
     * A script that nft's check mode ({@code nft -c}) accepts exactly when {@code chain} can be
     * used as a chain name and a jump target: nothing is applied, and no table is needed.
     */
    public static String chainNameProbe(String chain) {
        return "add table inet jcni_probe\n"
                + "add chain inet jcni_probe " + chain + "\n"
                + "add chain inet jcni_probe probe\n"
                + "add rule inet jcni_probe probe jump " + chain + "\n";
    }
}
