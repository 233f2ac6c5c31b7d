package io.jcni.linux;

import java.util.Arrays;
import java.util.HexFormat;

/** A link-layer address (6 bytes for Ethernet); immutable; prints as aa:bb:cc:dd:ee:ff. */
public final class MacAddress {
    private static final HexFormat HEX = HexFormat.ofDelimiter(":");

    private final byte[] bytes;

    private MacAddress(byte[] bytes) {
        this.bytes = bytes;
    }

    public static MacAddress of(byte[] bytes) {
        return new MacAddress(bytes.clone());
    }

    /** Parses "aa:bb:cc:dd:ee:ff" (also with '-' separators). */
    public static MacAddress parse(String s) {
        try {
            byte[] b = HEX.parseHex(s.trim().replace('-', ':'));
            if (b.length == 0) throw new IllegalArgumentException("empty");
            return new MacAddress(b);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad MAC address: " + s, e);
        }
    }

    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MacAddress m && Arrays.equals(bytes, m.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return HEX.formatHex(bytes);
    }
}
