package io.jcni.types;

import java.util.List;

/**
 * A CNI specification version ("major.minor.patch"), and the set this implementation speaks.
 *
 * <p>Versions sort numerically, so "0.10.0" &gt; "0.4.0". Unknown but well-formed versions parse;
 * {@link #isSupported()} says whether we can speak them.
 */
public record CniVersion(int major, int minor, int patch) implements Comparable<CniVersion> {

    public static final CniVersion V0_1_0 = new CniVersion(0, 1, 0);
    public static final CniVersion V0_2_0 = new CniVersion(0, 2, 0);
    public static final CniVersion V0_3_0 = new CniVersion(0, 3, 0);
    public static final CniVersion V0_3_1 = new CniVersion(0, 3, 1);
    public static final CniVersion V0_4_0 = new CniVersion(0, 4, 0);
    public static final CniVersion V1_0_0 = new CniVersion(1, 0, 0);
    public static final CniVersion V1_1_0 = new CniVersion(1, 1, 0);

    /** The newest version this implementation speaks. */
    public static final CniVersion CURRENT = V1_1_0;

    /** Every version this implementation speaks, oldest first. */
    public static final List<CniVersion> ALL = List.of(V0_1_0, V0_2_0, V0_3_0, V0_3_1, V0_4_0, V1_0_0, V1_1_0);

    /** Parses "x.y.z"; an empty version means 0.1.0, as libcni treats configs that carry none. */
    public static CniVersion parse(String s) {
        if (s == null || s.isEmpty()) return V0_1_0;
        String[] parts = s.split("\\.", -1);
        if (parts.length != 3) throw new IllegalArgumentException("invalid version \"" + s + "\": must be major.minor.patch");
        try {
            int[] n = new int[3];
            for (int i = 0; i < 3; i++) {
                if (!Cidr.isDecimal(parts[i])) throw new NumberFormatException();
                n[i] = Integer.parseInt(parts[i]);
            }
            return new CniVersion(n[0], n[1], n[2]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid version \"" + s + "\": must be major.minor.patch");
        }
    }

    /** Parses and insists on a version we speak, as a plugin or runtime must. */
    public static CniVersion parseSupported(String s) {
        CniVersion v;
        try {
            v = parse(s);
        } catch (IllegalArgumentException e) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "incompatible CNI versions", e.getMessage(), e);
        }
        if (!v.isSupported()) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "incompatible CNI versions",
                    "config is \"" + s + "\", plugin supports " + supportedStrings());
        }
        return v;
    }

    public static List<String> supportedStrings() {
        return ALL.stream().map(CniVersion::toString).toList();
    }

    public boolean isSupported() {
        return ALL.contains(this);
    }

    /** 0.1.0 and 0.2.0 results carry ip4/ip6 instead of interfaces and ips. */
    public boolean hasLegacyResult() {
        return compareTo(V0_3_0) < 0;
    }

    /** 1.0.0 and later results carry no ips[].version. */
    public boolean atLeast(CniVersion other) {
        return compareTo(other) >= 0;
    }

    /** CHECK exists from 0.4.0 on. */
    public boolean supportsCheck() {
        return atLeast(V0_4_0);
    }

    /** GC and STATUS exist from 1.1.0 on. */
    public boolean supportsGcAndStatus() {
        return atLeast(V1_1_0);
    }

    @Override
    public int compareTo(CniVersion o) {
        if (major != o.major) return Integer.compare(major, o.major);
        if (minor != o.minor) return Integer.compare(minor, o.minor);
        return Integer.compare(patch, o.patch);
    }

    /*
     * equals and hashCode by hand: a record's generated ones are linked at run time through
     * ObjectMethods (method handles spun into classes), which the AOT cache does not keep, and every
     * plugin call compares versions: ~7 classes and milliseconds of each standalone process.
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof CniVersion v && v.major == major && v.minor == minor && v.patch == patch;
    }

    @Override
    public int hashCode() {
        return (major * 31 + minor) * 31 + patch;
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}
