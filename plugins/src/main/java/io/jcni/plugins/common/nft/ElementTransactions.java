package io.jcni.plugins.common.nft;

import io.jcni.linux.Errno;
import io.jcni.linux.nft.NfTables;
import io.jcni.linux.nft.NftBatch;
import io.jcni.linux.nft.NftBatch.Family;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftException;
import io.jcni.plugins.common.nft.ElementStore.Element;
import java.util.List;

/**
 * Element changes of one table as nf_tables transactions over netlink: the batch (pure, its size
 * depends only on the elements given, never on what else the table holds), sent once the
 * feature's structure is in place, and the lookups CHECK makes.
 */
final class ElementTransactions {
    private final Nft nft;
    private final String table;
    private final Family family;
    private final String name;
    private final StructureCache structures;

    /** @param table family and name as nft writes them ({@code inet jcni}) */
    ElementTransactions(Nft nft, String table, StructureCache structures) {
        this.nft = nft;
        this.table = table;
        this.family = Family.of(table.substring(0, table.indexOf(' ')));
        this.name = table.substring(table.indexOf(' ') + 1);
        this.structures = structures;
    }

    /**
     * One element to put in place: {@code held} is the value its key is believed to hold now (null:
     * nobody holds it), {@code comment} names its owner.
     */
    record Put(Element element, String held, String comment) {
        // By hand, as Element's: the generated ones are linked at run time (plugins/README.md).
        @Override
        public boolean equals(Object o) {
            return o instanceof Put p && element.equals(p.element) && java.util.Objects.equals(held, p.held)
                    && java.util.Objects.equals(comment, p.comment);
        }

        @Override
        public int hashCode() {
            return (element.hashCode() * 31 + java.util.Objects.hashCode(held)) * 31 + java.util.Objects.hashCode(comment);
        }
    }

    /**
     * The element changes of a transaction, for netlink: the structure's own elements (added, never
     * removed), tolerant removals ({@code add K : V; delete K}), then additions that replace
     * whatever holds the key ({@code add K : HELD; delete K; add K : V}). Pure.
     */
    static NftBatch batch(String table, Skeleton skel, List<Element> remove, List<Put> puts) {
        Family family = Family.of(table.substring(0, table.indexOf(' ')));
        String name = table.substring(table.indexOf(' ') + 1);
        NftBatch b = new NftBatch();
        for (Element e : skel.elements()) b.addElement(family, name, e.set(), skel.key(table, e), null, null, e.key());
        for (Element e : remove) {
            byte[] key = skel.key(table, e);
            b.addElement(family, name, e.set(), key, skel.data(table, e, e.value()), null, text(e, e.value()));
            b.deleteElement(family, name, e.set(), key, e.key());
        }
        for (Put p : puts) {
            Element e = p.element();
            String held = p.held() == null ? e.value() : p.held();
            byte[] key = skel.key(table, e);
            b.addElement(family, name, e.set(), key, skel.data(table, e, held), null, text(e, held));
            b.deleteElement(family, name, e.set(), key, e.key());
            b.addElement(family, name, e.set(), key, skel.data(table, e, e.value()), p.comment(), text(e, e.value()));
        }
        return b;
    }

    private static String text(Element e, String value) {
        return value == null ? e.key() : e.key() + " : " + value;
    }

    /**
     * Sends {@code batch} over netlink once {@code skel}'s structure is in place ({@link
     * StructureCache}). If the kernel says a table or set is missing (ENOENT: a reboot, {@code nft
     * flush ruleset}), the structure is applied again and the batch resent once. If it says a key
     * holds another value (EEXIST, EBUSY before 6.x) and {@code applied} is given, that batch is
     * sent instead: the same changes written for a transaction that went through before a crash
     * kept its records from being written; if it is refused too, the first error is thrown.
     */
    void apply(Skeleton skel, NftBatch batch, NftBatch applied) {
        boolean fresh = structures.ensure(skel);
        try (NfTables t = nft.tables()) {
            try {
                t.apply(batch);
            } catch (NftException e) {
                if (e.errno() == Errno.EEXIST || e.errno() == Errno.EBUSY) {
                    if (applied == null) throw e;
                    try {
                        t.apply(applied);
                        return;
                    } catch (NftException again) {
                        throw e;
                    }
                }
                if (fresh || e.errno() != Errno.ENOENT) throw e;
                structures.forget();
                structures.ensure(skel);
                t.apply(batch);
            }
        }
    }

    /**
     * Verifies that each chain of this table {@code skel} fills holds its number of rules (one dump
     * per chain) and that each of {@code elements} is present (one lookup each). Throws
     * NftException naming the first thing missing; {@code onChangedStructure} runs first when a
     * chain is found changed.
     */
    void verifyPresent(Skeleton skel, List<Element> elements, Runnable onChangedStructure) {
        try (NfTables t = nft.tables()) {
            for (var chain : skel.rules().entrySet()) {
                String[] f = chain.getKey().split(" ");
                if (!(f[0] + " " + f[1]).equals(table)) continue;
                int have = t.ruleCount(family, name, f[2]);
                if (have != chain.getValue()) {
                    onChangedStructure.run();
                    throw new NftException("list chain " + chain.getKey(), -1,
                            have + " rules where jcni put " + chain.getValue() + "; the next ADD puts them back");
                }
            }
            for (Element e : elements) {
                if (!t.hasElement(family, name, e.set(), skel.key(table, e))) {
                    throw new NftException("get element " + table + " " + e.set() + " { " + e.key() + " }", -1, "not in nftables");
                }
            }
        }
    }
}
