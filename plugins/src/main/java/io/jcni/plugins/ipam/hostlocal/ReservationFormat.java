package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Names;

/**
 * The bytes of a reservation file, as upstream's disk backend (backend/disk/backend.go) writes and
 * matches them.
 *
 * <ul>
 *   <li>Written by {@code Store.Reserve}: {@code TrimSpace(containerID) + "\r\n" + ifname}, no
 *       trailing newline.</li>
 *   <li>Legacy files (before the interface name was recorded) hold only the container ID.</li>
 *   <li>Matching ({@code ReleaseByID}, {@code GetByID}, {@code FindByID}) compares
 *       {@code TrimSpace(content)} with those two strings exactly.</li>
 * </ul>
 */
final class ReservationFormat {
    static final String LINE_BREAK = "\r\n";

    private ReservationFormat() {}

    /** The content a reservation for this attachment has. */
    static String content(String containerId, String ifname) {
        return trimSpace(containerId) + LINE_BREAK + ifname;
    }

    /** The content of a legacy reservation for this container. */
    static String legacyContent(String containerId) {
        return trimSpace(containerId);
    }

    /**
     * The attachment a trimmed reservation holds: {container ID, interface name}, the name null in
     * the legacy format; null when the content is neither, or names what the plugin would never
     * have accepted (a container ID or interface name that breaks the CNI rules: a line break, say).
     */
    static String[] parse(String trimmed) {
        int br = trimmed.indexOf(LINE_BREAK);
        String id = br < 0 ? trimmed : trimmed.substring(0, br);
        String ifname = br < 0 ? null : trimmed.substring(br + LINE_BREAK.length());
        if (!Names.isCniName(id) || (ifname != null && Names.interfaceNameProblem(ifname) != null)) return null;
        return new String[] {id, ifname};
    }

    /** Go's {@code strings.TrimSpace}: Unicode white space, which differs from Java's strip(). */
    static String trimSpace(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isGoSpace(s.charAt(start))) start++;
        while (end > start && isGoSpace(s.charAt(end - 1))) end--;
        return s.substring(start, end);
    }

    private static boolean isGoSpace(char c) {
        return switch (c) {
            case '\t', '\n', 0x0B, '\f', '\r', ' ', 0x85, 0xA0 -> true;
            default -> c > 0xFF && Character.isSpaceChar(c);
        };
    }
}
