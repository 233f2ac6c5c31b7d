package io.jcni.linux;

import java.net.Inet4Address;
import java.net.InetAddress;

/** Address families as rtnetlink uses them; {@link #ALL} asks dumps for every family. */
public enum Family {
    ALL(0),
    INET(2),
    INET6(10);

    /** AF_BRIDGE: bridge ports and FDB entries. */
    public static final int AF_BRIDGE = 7;

    private final int af;

    Family(int af) {
        this.af = af;
    }

    /** The AF_* number. */
    public int af() {
        return af;
    }

    public static Family of(InetAddress a) {
        return a instanceof Inet4Address ? INET : INET6;
    }

    public static Family ofAf(int af) {
        return switch (af) {
            case 2 -> INET;
            case 10 -> INET6;
            default -> ALL;
        };
    }
}
