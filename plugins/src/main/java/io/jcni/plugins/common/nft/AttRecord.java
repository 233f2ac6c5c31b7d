package io.jcni.plugins.common.nft;

import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.types.Json;
import io.jcni.types.StateDoc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An attachment's record ({@code att/SCOPE/NET/CID@IFNAME} under {@link StateFiles}' directory):
 * who it is and the elements it lists, and its JSON.
 */
record AttRecord(Owner owner, List<Element> elements) {
    /** The record's JSON: the owner's four names and its elements as [set, key] or [set, key, value]. */
    static String json(Owner o, List<Element> elements) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scope", o.scope());
        m.put("network", o.network());
        m.put("containerId", o.containerId());
        m.put("ifname", o.ifname());
        List<Object> els = new ArrayList<>();
        for (Element e : elements) {
            List<Object> t = new ArrayList<>(List.of(e.set(), e.key()));
            if (e.value() != null) t.add(e.value());
            els.add(t);
        }
        m.put("elements", els);
        return Json.write(m);
    }

    /** The elements {@code record} lists; a damaged one throws {@link io.jcni.types.DamagedStateException}. */
    static List<Element> elements(StateDoc record) {
        List<Element> out = new ArrayList<>();
        List<List<String>> els = record.stringLists("elements");
        for (int i = 0; i < els.size(); i++) {
            List<String> t = els.get(i);
            if (t.size() < 2 || t.size() > 3) throw record.damaged("elements[" + i + "]", "expected [set, key] or [set, key, value]");
            out.add(new Element(t.get(0), t.get(1), t.size() > 2 ? t.get(2) : null));
        }
        return out;
    }
}
