package io.jcni.linux;

/** Where an ipvlan's packets are switched (IFLA_IPVLAN_MODE). */
public enum IpvlanMode {
    L2(0),
    L3(1),
    L3S(2);

    final int value;

    IpvlanMode(int value) {
        this.value = value;
    }

    /** The kernel's value, or null for one this enum does not know. */
    public static IpvlanMode of(int value) {
        for (IpvlanMode m : values()) if (m.value == value) return m;
        return null;
    }

    /** Parses the names the CNI ipvlan plugin accepts ("l2", the default, "l3", "l3s"). */
    public static IpvlanMode parse(String s) {
        return switch (s) {
            case "", "l2" -> L2;
            case "l3" -> L3;
            case "l3s" -> L3S;
            default -> throw new IllegalArgumentException("unknown ipvlan mode: " + s);
        };
    }

    /** The CNI config name: "l2", "l3", "l3s". */
    public String configName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
