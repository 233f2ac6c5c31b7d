package io.jcni.linux;

/** How macvlan siblings on one parent reach each other (IFLA_MACVLAN_MODE). */
public enum MacvlanMode {
    PRIVATE(1),
    VEPA(2),
    BRIDGE(4),
    PASSTHRU(8);

    final int value;

    MacvlanMode(int value) {
        this.value = value;
    }

    /** The kernel's value, or null for one this enum does not know. */
    public static MacvlanMode of(int value) {
        for (MacvlanMode m : values()) if (m.value == value) return m;
        return null;
    }

    /** The CNI config name: "bridge", "private", "vepa", "passthru". */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses the names the CNI macvlan plugin accepts ("bridge", "private", "vepa", "passthru"). */
    public static MacvlanMode parse(String s) {
        return switch (s) {
            case "", "bridge" -> BRIDGE;
            case "private" -> PRIVATE;
            case "vepa" -> VEPA;
            case "passthru" -> PASSTHRU;
            default -> throw new IllegalArgumentException("unknown macvlan mode: " + s);
        };
    }
}
