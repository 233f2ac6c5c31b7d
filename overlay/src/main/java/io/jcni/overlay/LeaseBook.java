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
    // Keyed by Cidr (a subnet of either family) and by lower-case MAC (String) respectively.
    private final Map<Object, Set<String>> bySubnet = new HashMap<>();
    private final Map<Object, Set<String>> byMac = new HashMap<>();
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
        if (old != null) ch.subnets().add(old.candidate().lease().id());
        ch.subnets().add(c.candidate().lease().id());
        return ch;
    }

    Change remove(String key) {
        Checked old = byKey.remove(key);
        if (old == null) return new Change(new HashSet<>(), new HashSet<>());
        unindex(old);
        forget(old);
        Change ch = rejudge(links(old), key);
        ch.subnets().add(old.candidate().lease().id());
        ch.keys().add(key);
        return ch;
    }

    /** Drops {@code old}'s verdict: its acceptance (of its subnet) or its rejection. */
    private void forget(Checked old) {
        String key = old.candidate().key();
        rejected.remove(key);
        Cidr sn = old.candidate().lease().id();
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
            Set<String> keys = link instanceof Cidr ? bySubnet.get(link) : byMac.get(link);
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
            Cidr sn = m.candidate().lease().id();
            subnets.add(sn);
            Checked holder = accepted.get(sn);
            if (holder != null && component.contains(holder.candidate().key())) accepted.remove(sn);
            rejected.remove(k);
        }
        LeaseValidator.Verdict v = LeaseValidator.resolve(members);
        for (Checked m : members) {
            String why = v.rejected().get(m.candidate().key());
            if (why != null) rejected.put(m.candidate().key(), why);
            else accepted.put(m.candidate().lease().id(), m);
        }
        return new Change(subnets, component);
    }

    /** The subnets and MACs through which {@code c} can conflict; none when it has a problem of its own. */
    private static List<Object> links(Checked c) {
        if (c.problem() != null) return List.of();
        List<Object> links = new ArrayList<>(LeaseValidator.subnets(c.candidate().lease()));
        links.addAll(LeaseValidator.macs(c.candidate().lease()));
        return links;
    }

    private void index(Checked c) {
        for (Object link : links(c)) {
            var map = link instanceof Cidr ? bySubnet : byMac;
            map.computeIfAbsent(link, x -> new HashSet<>()).add(c.candidate().key());
        }
    }

    private void unindex(Checked c) {
        String key = c.candidate().key();
        for (Object link : links(c)) {
            Map<Object, Set<String>> map = link instanceof Cidr ? bySubnet : byMac;
            Set<String> s = map.get(link);
            if (s != null && s.remove(key) && s.isEmpty()) map.remove(link);
        }
    }
}
