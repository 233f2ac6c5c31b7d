package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Element;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A transaction of {@link ElementTransactions#batch} written as an {@code nft -f} script: what
 * tests compare the netlink path with, and read to see what a change sends.
 */
public final class ElementScript {
    private ElementScript() {}

    /**
     * The transaction: skeleton, then tolerant removals, then additions that replace whatever holds
     * the key. Pure: its size depends only on the arguments, never on what else the table holds.
     *
     * @param add each element to add, with the value the key is believed to hold now (the new
     *            value when nobody holds it)
     */
    public static String script(String skeleton, String comment, List<Element> remove, Map<Element, String> add) {
        return script(ElementStore.TABLE, skeleton, comment, remove, add);
    }

    /** The additions of {@link #script}, all with {@code comment}, for {@link ElementTransactions#batch}. */
    public static List<ElementTransactions.Put> puts(String comment, Map<Element, String> add) {
        List<ElementTransactions.Put> out = new ArrayList<>();
        add.forEach((e, held) -> out.add(new ElementTransactions.Put(e, held, comment)));
        return out;
    }

    /** {@link #script(String, String, List, Map)} for the elements of {@code table}. */
    public static String script(String table, String skeleton, String comment, List<Element> remove, Map<Element, String> add) {
        StringBuilder b = new StringBuilder(skeleton);
        if (!skeleton.isEmpty() && !skeleton.endsWith("\n")) b.append('\n');
        for (Element e : remove) {
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key());
            if (e.value() != null) b.append(" : ").append(e.value());
            b.append(" }\n");
            b.append("delete element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key()).append(" }\n");
        }
        for (var en : add.entrySet()) {
            Element e = en.getKey();
            String held = en.getValue() == null ? e.value() : en.getValue();
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key());
            if (e.value() != null) b.append(" : ").append(held);
            b.append(" }\n");
            b.append("delete element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key()).append(" }\n");
            b.append("add element ").append(table).append(' ').append(e.set()).append(" { ").append(e.key())
                    .append(" comment \"").append(comment).append('"');
            if (e.value() != null) b.append(" : ").append(e.value());
            b.append(" }\n");
        }
        return b.toString();
    }
}
