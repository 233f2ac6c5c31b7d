package io.jcni.linux;

import io.jcni.types.Cidr;

/**
 * A policy-routing rule ({@code ip rule}), e.g. source-based routing:
 * {@code Rule.from(Cidr.parse("10.0.0.5/32"), 100).priority(1000)}.
 *
 * @param priority -1 lets the kernel choose on add and matches any on delete
 * @param table -1 for none (on delete: any)
 * @param iif, oif interface names or null
 */
public record Rule(Family family, int priority, int table, Cidr src, Cidr dst, String iif, String oif,
                   int action) {
    public static final int ACTION_TO_TABLE = 1;

    /** Traffic from {@code src} looks up {@code table}. */
    public static Rule from(Cidr src, int table) {
        return new Rule(Family.of(src.address()), -1, table, src, null, null, null, ACTION_TO_TABLE);
    }

    /** Traffic to {@code dst} looks up {@code table}. */
    public static Rule to(Cidr dst, int table) {
        return new Rule(Family.of(dst.address()), -1, table, null, dst, null, null, ACTION_TO_TABLE);
    }

    /** Every packet of {@code family} looks up {@code table}. */
    public static Rule all(Family family, int table) {
        return new Rule(family, -1, table, null, null, null, null, ACTION_TO_TABLE);
    }

    public Rule priority(int p) {
        return new Rule(family, p, table, src, dst, iif, oif, action);
    }

    public Rule table(int t) {
        return new Rule(family, priority, t, src, dst, iif, oif, action);
    }

    public Rule iif(String name) {
        return new Rule(family, priority, table, src, dst, name, oif, action);
    }

    public Rule oif(String name) {
        return new Rule(family, priority, table, src, dst, iif, name, action);
    }

    void encode(NlMessage m) {
        int t = table < 0 ? 0 : table;
        m.u8(family.af()).u8(dst == null ? 0 : dst.prefix()).u8(src == null ? 0 : src.prefix()).u8(0)
                .u8(t < 256 ? t : 0).u8(0).u8(0).u8(action).u32(0);
        if (table >= 0) m.attrU32(Rtm.FRA_TABLE, table);
        if (priority >= 0) m.attrU32(Rtm.FRA_PRIORITY, priority);
        if (src != null) m.attrAddress(Rtm.FRA_SRC, src.network());
        if (dst != null) m.attrAddress(Rtm.FRA_DST, dst.network());
        if (iif != null) m.attrString(Rtm.FRA_IIFNAME, iif);
        if (oif != null) m.attrString(Rtm.FRA_OIFNAME, oif);
    }

    static Rule decode(NlMsg m) {
        NlAttrs a = m.attrs(Rtm.FIB_RULE_HDR_SIZE);
        var src = a.address(Rtm.FRA_SRC);
        var dst = a.address(Rtm.FRA_DST);
        return new Rule(Family.ofAf(m.u8(0)), a.u32(Rtm.FRA_PRIORITY, 0), a.u32(Rtm.FRA_TABLE, m.u8(4)),
                src == null ? null : new Cidr(src, m.u8(2)), dst == null ? null : new Cidr(dst, m.u8(1)),
                a.string(Rtm.FRA_IIFNAME), a.string(Rtm.FRA_OIFNAME), m.u8(7));
    }
}
