package io.jcni.plugins.common.nft;

import io.jcni.common.AtomicFile;
import io.jcni.types.Names;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * How the names in element state (scopes, networks, container IDs, interfaces, sets, keys) become
 * file names under {@link StateFiles}' directory: %-encoded, so any string is one safe name, and
 * hashed when too long.
 */
final class StateNames {
    /** Longest file name used as is: NAME_MAX is 255 bytes, and a temporary name adds up to {@link AtomicFile#MAX_TEMPORARY_EXTRA} while writing. */
    static final int MAX_FILE_NAME = 200;
    /** Marks a hashed name ({@link Names#shortened}); {@link #enc} never produces it. */
    static final char HASH_MARK = '~';

    private StateNames() {}

    /** %-encodes everything but [A-Za-z0-9_-] and non-leading dots, so any string is one safe file name. */
    static String enc(String s) {
        StringBuilder b = new StringBuilder();
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xff;
            boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '-' || (c == '.' && i > 0);
            if (plain) b.append((char) c);
            else b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                    .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
        }
        if (b.isEmpty()) b.append("%");
        return b.toString();
    }

    static String dec(String s) {
        if (s.equals("%")) return "";
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /**
     * {@code encoded} (an {@link #enc} result) as one file name: as is when short enough, else its
     * first characters, {@value #HASH_MARK} and its SHA-256, so long container IDs and network
     * names (which the reference accepts) still get a file of their own.
     */
    static String fileName(String encoded) {
        return Names.shortened(encoded, MAX_FILE_NAME);
    }
}
