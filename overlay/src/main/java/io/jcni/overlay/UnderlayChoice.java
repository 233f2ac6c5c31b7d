package io.jcni.overlay;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Which interface carries host-to-host traffic, chosen as flanneld chooses it from {@code --iface}
 * (repeatable), {@code --iface-regex} (repeatable) and {@code --iface-can-reach}. Pure: it works on
 * a snapshot of the links, their IPv4 addresses and the main table's routes.
 *
 * <p>flanneld's order: every {@code --iface} in turn (a name, or an IPv4 address some interface
 * holds), then every regex in turn (first against the interfaces' IPv4 addresses, interface by
 * interface in index order, the matched address becoming the interface's address; failing that,
 * against the interface names), then {@code --iface-can-reach} (the interface {@code ip route get}
 * would use, with its source address). The first that finds an interface wins; each miss is
 * reported. None of the three given: the interface of the default route.
 *
 * @param ifaces   {@code --iface} values in the order given
 * @param regexes  {@code --iface-regex} values in the order given (unanchored, as Go's MatchString)
 * @param canReach {@code --iface-can-reach}, or empty
 */
public record UnderlayChoice(List<String> ifaces, List<String> regexes, String canReach) {

    public static final UnderlayChoice DEFAULT_ROUTE = new UnderlayChoice(List.of(), List.of(), "");

    /** One interface as the kernel lists it, in index order. */
    public record Iface(int index, String name, List<IpAddr> v4) {}

    /** One route of the main table (IPv4). */
    public record RouteFact(Cidr dst, int oif, int priority, IpAddr src) {}

    /** @param address the address the choice found (an --iface IP, a regex match, the route's source); null: the interface's first */
    public record Picked(Iface iface, IpAddr address) {}

    public UnderlayChoice {
        ifaces = List.copyOf(ifaces);
        regexes = List.copyOf(regexes);
        for (String r : regexes) {
            try {
                Pattern.compile(r);
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("--iface-regex: could not compile the IP address regex '" + r + "': " + e.getDescription());
            }
        }
        if (!canReach.isEmpty() && IpAddr.tryParse(canReach) == null) throw new IllegalArgumentException("--iface-can-reach: not an IP address: " + canReach);
    }

    public boolean isDefaultRoute() {
        return ifaces.isEmpty() && regexes.isEmpty() && canReach.isEmpty();
    }

    /** The interface to use; {@code miss} hears why each option found nothing. Empty: none matched (flanneld exits then). */
    public Optional<Picked> pick(List<Iface> links, List<RouteFact> routes, Consumer<String> miss) {
        if (isDefaultRoute()) {
            RouteFact r = best(routes, null);
            return Optional.ofNullable(r == null ? null : byIndex(links, r.oif())).map(i -> new Picked(i, null));
        }
        for (String want : ifaces) {
            IpAddr ip = IpAddr.tryParse(want);
            for (Iface i : links) {
                if (ip == null ? i.name().equals(want) : i.v4().contains(ip)) return Optional.of(new Picked(i, ip));
            }
            miss.accept("could not find valid interface matching " + want);
        }
        for (String re : regexes) {
            Pattern p = Pattern.compile(re);
            for (Iface i : links) {
                for (IpAddr a : i.v4()) {
                    if (p.matcher(a.toString()).find()) return Optional.of(new Picked(i, a));
                }
            }
            for (Iface i : links) {
                if (p.matcher(i.name()).find()) return Optional.of(new Picked(i, null));
            }
            List<String> available = new ArrayList<>();
            for (Iface i : links) available.add(i.name() + ":" + i.v4());
            miss.accept("could not match pattern " + re + " to any of the available network interfaces (" + String.join(", ", available) + ")");
        }
        if (!canReach.isEmpty()) {
            RouteFact r = best(routes, IpAddr.parse(canReach));
            Iface i = r == null ? null : byIndex(links, r.oif());
            if (i != null) return Optional.of(new Picked(i, r.src()));
            miss.accept("could not find valid interface matching ifaceCanReach: " + canReach + ": no route to it");
        }
        return Optional.empty();
    }

    /** The route the kernel would take to {@code to} in the main table (longest prefix, then lowest metric); null {@code to}: the default route. */
    static RouteFact best(List<RouteFact> routes, IpAddr to) {
        RouteFact best = null;
        for (RouteFact r : routes) {
            if (r.oif() <= 0 || r.dst().isV6()) continue;
            if (to == null ? r.dst().prefix() != 0 : !r.dst().contains(to)) continue;
            if (best == null || r.dst().prefix() > best.dst().prefix()
                    || (r.dst().prefix() == best.dst().prefix() && r.priority() < best.priority())) {
                best = r;
            }
        }
        return best;
    }

    private static Iface byIndex(List<Iface> links, int index) {
        for (Iface i : links) if (i.index() == index) return i;
        return null;
    }
}
