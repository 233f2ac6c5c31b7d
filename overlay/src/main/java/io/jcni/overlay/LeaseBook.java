package io.jcni.overlay;

import io.jcni.overlay.LeaseValidator.Checked;
import io.jcni.types.Cidr;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The remote leases known, by etcd key, with {@link LeaseValidator#resolve}'s verdict kept up to
 * date one change at a time. Pure. A lease can only conflict with leases sharing its subnet or its
 * VtepMAC (leases with a problem of their own conflict with nothing), so a change re-judges just
 * those, transitively: the cost of an event does not grow with the number of hosts, and the
 * verdict is the one {@code resolve} gives on the whole set.
 */
final class LeaseBook {
    /** What one change touched: the subnets whose accepted lease may differ, the keys whose verdict may differ. */
    record Change(Set<Cidr> subnets, Set<String> keys) {}

    private final Map<String, Checked> byKey = new HashMap<>();
    private final Map<Cidr, Set<String>> bySubnet = new HashMap<>();
    private final Map<String, Set<String>> byMac = new HashMap<>();
    private final Map<Cidr, Checked> accepted = new HashMap<>();
    private final Map<String, String> rejected = new HashMap<>();

    Change put(Checked c) {
        Checked old = byKey.put(c.candidate().key(), c);
        List<Object> seeds = new ArrayList<>();
        if (old != null) {
            unindex(old);
            seeds.addAll(links(old));
            forget(old);
        }
        index(c);
        seeds.addAll(links(c));
        Change ch = rejudge(seeds, c.candidate().key());
        if (old != null) ch.subnets().add(old.candidate().lease().subnet());
        ch.subnets().add(c.candidate().lease().subnet());
        return ch;
    }

    Change remove(String key) {
        Checked old = byKey.remove(key);
        if (old == null) return new Change(new HashSet<>(), new HashSet<>());
        unindex(old);
        forget(old);
        Change ch = rejudge(links(old), key);
        ch.subnets().add(old.candidate().lease().subnet());
        ch.keys().add(key);
        return ch;
    }

    /** Drops {@code old}'s verdict: its acceptance (of its subnet) or its rejection. */
    private void forget(Checked old) {
        String key = old.candidate().key();
        rejected.remove(key);
        Cidr sn = old.candidate().lease().subnet();
        Checked holder = accepted.get(sn);
        if (holder != null && holder.candidate().key().equals(key)) accepted.remove(sn);
    }

    void clear() {
        byKey.clear();
        bySubnet.clear();
        byMac.clear();
        accepted.clear();
        rejected.clear();
    }

    Collection<Checked> all() {
        return byKey.values();
    }

    Checked get(String key) {
        return byKey.get(key);
    }

    /** Subnet → accepted lease's entry. */
    Map<Cidr, Checked> accepted() {
        return accepted;
    }

    /** Key → why it is not accepted. */
    Map<String, String> rejected() {
        return rejected;
    }

    /** Re-judges every lease linked to {@code seeds} (subnets, MACs), plus {@code key} itself. */
    private Change rejudge(List<Object> seeds, String key) {
        Set<String> component = new LinkedHashSet<>();
        if (byKey.containsKey(key)) component.add(key);
        ArrayDeque<Object> todo = new ArrayDeque<>(seeds);
        Set<Object> seen = new HashSet<>();
        while (!todo.isEmpty()) {
            Object link = todo.poll();
            if (!seen.add(link)) continue;
            Set<String> keys = link instanceof Cidr c ? bySubnet.get(c) : byMac.get((String) link);
            if (keys == null) continue;
            for (String k : keys) {
                if (component.add(k)) todo.addAll(links(byKey.get(k)));
            }
        }
        List<Checked> members = new ArrayList<>(component.size());
        Set<Cidr> subnets = new HashSet<>();
        for (String k : component) {
            Checked m = byKey.get(k);
            members.add(m);
            Cidr sn = m.candidate().lease().subnet();
            subnets.add(sn);
            Checked holder = accepted.get(sn);
            if (holder != null && component.contains(holder.candidate().key())) accepted.remove(sn);
            rejected.remove(k);
        }
        LeaseValidator.Verdict v = LeaseValidator.resolve(members);
        for (Checked m : members) {
            String why = v.rejected().get(m.candidate().key());
            if (why != null) rejected.put(m.candidate().key(), why);
            else accepted.put(m.candidate().lease().subnet(), m);
        }
        return new Change(subnets, component);
    }

    /** The subnet and MAC through which {@code c} can conflict; none when it has a problem of its own. */
    private static List<Object> links(Checked c) {
        if (c.problem() != null) return List.of();
        String mac = mac(c);
        return mac == null ? List.of(c.candidate().lease().subnet()) : List.of(c.candidate().lease().subnet(), mac);
    }

    private void index(Checked c) {
        if (c.problem() != null) return;
        bySubnet.computeIfAbsent(c.candidate().lease().subnet(), x -> new HashSet<>()).add(c.candidate().key());
        String mac = mac(c);
        if (mac != null) byMac.computeIfAbsent(mac, x -> new HashSet<>()).add(c.candidate().key());
    }

    private void unindex(Checked c) {
        if (c.problem() != null) return;
        String key = c.candidate().key();
        Set<String> s = bySubnet.get(c.candidate().lease().subnet());
        if (s != null && s.remove(key) && s.isEmpty()) bySubnet.remove(c.candidate().lease().subnet());
        String mac = mac(c);
        if (mac != null) {
            Set<String> m = byMac.get(mac);
            if (m != null && m.remove(key) && m.isEmpty()) byMac.remove(mac);
        }
    }

    private static String mac(Checked c) {
        String m = c.candidate().lease().vtepMac();
        return m == null ? null : m.toLowerCase(Locale.ROOT);
    }
}
