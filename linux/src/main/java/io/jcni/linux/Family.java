package io.jcni.linux;

import io.jcni.types.IpAddr;

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

    public static Family of(IpAddr a) {
        return a.isV6() ? INET6 : INET;
    }

    public static Family ofAf(int af) {
        return switch (af) {
            case 2 -> INET;
            case 10 -> INET6;
            default -> ALL;
        };
    }
}
