package io.jcni.types;

/**
 * An address with a prefix length, "10.1.0.5/16" or "fd00::5/64": the form results and configs use.
 * The address keeps its host bits; {@link #network()} clears them.
 */
public record Cidr(IpAddr address, int prefix) {

    public Cidr {
        if (prefix < 0 || prefix > address.bits()) throw new IllegalArgumentException("invalid prefix length " + prefix);
    }

    public static Cidr parse(String s) {
        Cidr c = tryParse(s);
        if (c == null) throw new IllegalArgumentException("invalid CIDR address: " + s);
        return c;
    }

    public static Cidr tryParse(String s) {
        if (s == null) return null;
        int slash = s.indexOf('/');
        if (slash < 0) return null;
        IpAddr a = IpAddr.tryParse(s.substring(0, slash));
        if (a == null) return null;
        String p = s.substring(slash + 1);
        if (p.length() > 3 || !isDecimal(p)) return null;
        int len = Integer.parseInt(p);
        // "::ffff:1.2.3.4/120" style prefixes are not worth supporting; Go rejects them too.
        if (len > a.bits()) return null;
        return new Cidr(a, len);
    }

    /**
     * Non-empty and ASCII digits only. A loop, not {@code chars().allMatch}: the first stream of a
     * process initialises the stream framework (reflection on its flag enums), ~2 ms of every
     * standalone plugin call, and parsing a version or a prefix is on every call's path.
     */
    static boolean isDecimal(String s) {
        if (s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return false;
        }
        return true;
    }

    /** One address as a prefix: /32 or /128, as a host route or a source rule takes it. */
    public static Cidr host(IpAddr ip) {
        return new Cidr(ip, ip.bits());
    }

    /** 0.0.0.0/0 or ::/0: every address of a family, the default route's destination. */
    public static Cidr any(boolean v6) {
        return new Cidr(new IpAddr(new byte[v6 ? 16 : 4]), 0);
    }

    public boolean isV6() {
        return address.isV6();
    }

    /** The network address: host bits cleared. */
    public IpAddr network() {
        byte[] b = address.bytes();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            b[i] &= (byte) (0xff << (8 - keep));
        }
        return new IpAddr(b);
    }

    /** The last address of the network: host bits set (the IPv4 broadcast address). */
    public IpAddr last() {
        byte[] b = address.bytes();
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            b[i] |= (byte) (0xff >>> keep);
        }
        return new IpAddr(b);
    }

    public boolean contains(IpAddr ip) {
        if (ip.isV6() != isV6()) return false;
        return new Cidr(ip, prefix).network().equals(network());
    }

    /** This prefix with the host bits cleared, e.g. 10.1.0.0/16. */
    public Cidr masked() {
        return new Cidr(network(), prefix);
    }

    /** The dotted netmask, for IPv4 only (e.g. 255.255.0.0). */
    public IpAddr mask() {
        byte[] b = new byte[address.bytes().length];
        for (int i = 0; i < b.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            b[i] = (byte) (0xff << (8 - keep));
        }
        return new IpAddr(b);
    }

    /*
     * equals and hashCode by hand, as in CniVersion: a record's generated ones are linked at run
     * time through ObjectMethods, which the AOT cache does not keep. Bridge ADD compares the
     * bridge's addresses with the gateway's: that first comparison spun method handles for ~10 ms,
     * a sixth of a standalone ADD's CPU.
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof Cidr c && c.prefix == prefix && c.address.equals(address);
    }

    @Override
    public int hashCode() {
        return address.hashCode() * 31 + prefix;
    }

    @Override
    public String toString() {
        return address + "/" + prefix;
    }
}
