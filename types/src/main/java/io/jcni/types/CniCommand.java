package io.jcni.types;

/** The operations a plugin performs, and the spec version each first appeared in. */
public enum CniCommand {
    ADD(CniVersion.V0_1_0),
    DEL(CniVersion.V0_1_0),
    CHECK(CniVersion.V0_4_0),
    GC(CniVersion.V1_1_0),
    STATUS(CniVersion.V1_1_0),
    VERSION(CniVersion.V0_1_0);

    // CniVersion is a record of three ints, so immutable; the check trusts only its @Immutable
    // annotation, from a library the types module (on every plugin's start-up path) does not load.
    @SuppressWarnings("ImmutableEnumChecker")
    private final CniVersion since;

    CniCommand(CniVersion since) {
        this.since = since;
    }

    public CniVersion since() {
        return since;
    }

    /** Whether a config of this version may be sent with this command. */
    public boolean allowedIn(CniVersion v) {
        return v.atLeast(since);
    }

    /** The command named by CNI_COMMAND, or null when it names none. */
    public static CniCommand of(String s) {
        if (s == null) return null;
        for (CniCommand c : values()) if (c.name().equals(s)) return c;
        return null;
    }

    /** ADD, DEL and CHECK act on one attachment and need CNI_CONTAINERID, CNI_NETNS (not DEL), CNI_IFNAME. */
    public boolean isPerAttachment() {
        return this == ADD || this == DEL || this == CHECK;
    }
}
