package io.jcni.overlay;

import io.jcni.linux.Address;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Which interface carries host-to-host traffic, chosen as flanneld chooses it from {@code --iface}
 * (repeatable), {@code --iface-regex} (repeatable) and {@code --iface-can-reach}, for the network's
 * families (flanneld's {@code ipStack}). Pure: it works on a snapshot of the links, their addresses
 * and the main tables' routes.
 *
 * <p>flanneld's order: every {@code --iface} in turn (a name, or an address some interface holds:
 * an IPv4 one unless the network is IPv6-only, then an IPv6 one), then every regex in turn (first
 * against the interfaces' addresses, interface by interface in index order, the matched address
 * becoming the interface's address; failing that, against the interface names), then
 * {@code --iface-can-reach} (the interface {@code ip route get} would use). The first that finds
 * an interface wins; each miss is reported. None of the three given: the interface of the default
 * route of the network's family; a dual-stack network needs both default routes, on one interface.
 *
 * @param ifaces   {@code --iface} values in the order given
 * @param regexes  {@code --iface-regex} values in the order given (unanchored, as Go's MatchString)
 * @param canReach {@code --iface-can-reach}, or empty
 */
public record UnderlayChoice(List<String> ifaces, List<String> regexes, String canReach) {

    public static final UnderlayChoice DEFAULT_ROUTE = new UnderlayChoice(List.of(), List.of(), "");

    /** The network's families, as flanneld's {@code ipStack}: they decide which addresses and routes the choice reads. */
    public enum Stack {
        IPV4, IPV6, DUAL;

        public static Stack of(boolean ipv4, boolean ipv6) {
            if (ipv4 && ipv6) return DUAL;
            if (ipv6) return IPV6;
            if (ipv4) return IPV4;
            throw new IllegalArgumentException("no family left to lease");
        }

        boolean hasV4() {
            return this != IPV6;
        }

        boolean hasV6() {
            return this != IPV4;
        }
    }

    /** One IPv6 address of an interface with its IFA_F_* flags, in the kernel's order. */
    public record Addr6(IpAddr address, int flags) {
        static final int IFA_F_TEMPORARY = 0x01, IFA_F_DEPRECATED = 0x20;

        public Addr6(String address) {
            this(IpAddr.parse(address), Address.IFA_F_PERMANENT);
        }
    }

    /** One interface as the kernel lists it, in index order: its IPv4 addresses and its IPv6 ones. */
    public record Iface(int index, String name, List<IpAddr> v4, List<Addr6> v6) {
        public Iface {
            v4 = List.copyOf(v4);
            v6 = List.copyOf(v6);
        }

        public Iface(int index, String name, List<IpAddr> v4) {
            this(index, name, v4, List.of());
        }

        /**
         * The IPv6 addresses flanneld's {@code GetInterfaceIP6Addrs} gives: unicast (global or
         * link-local), not deprecated; global before link-local, permanent (configured) before
         * not, non-temporary before temporary, else in the kernel's order.
         */
        public List<IpAddr> usableV6() {
            return v6.stream()
                    .filter(a -> unicast(a.address()) && (a.flags() & Addr6.IFA_F_DEPRECATED) == 0)
                    .sorted(Comparator.<Addr6>comparingInt(a -> a.address().isLinkLocalUnicast() ? 1 : 0)
                            .thenComparingInt(a -> (a.flags() & Address.IFA_F_PERMANENT) != 0 ? 0 : 1)
                            .thenComparingInt(a -> (a.flags() & Addr6.IFA_F_TEMPORARY) != 0 ? 1 : 0))
                    .map(Addr6::address)
                    .toList();
        }

        boolean holdsV6(IpAddr ip) {
            for (Addr6 a : v6) if (a.address().equals(ip)) return true;
            return false;
        }
    }

    /** One route of a main table, either family. */
    public record RouteFact(Cidr dst, int oif, int priority, IpAddr src) {}

    /**
     * @param address  the IPv4 address the choice found (an --iface IP, a regex match, the IPv4 route's source); null: the interface's first
     * @param address6 the IPv6 address the choice found (an --iface IP, a regex match); null: the interface's first
     */
    public record Picked(Iface iface, IpAddr address, IpAddr address6) {
        public Picked(Iface iface, IpAddr address) {
            this(iface, address, null);
        }
    }

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

    /**
     * The interface to use for a network of {@code stack}; {@code miss} hears why each option found
     * nothing. Empty: none matched (flanneld exits then). Without any option, no default route to
     * use throws, saying why.
     */
    public Optional<Picked> pick(Stack stack, List<Iface> links, List<RouteFact> routes, Consumer<String> miss) {
        if (isDefaultRoute()) return Optional.of(byDefaultRoutes(stack, links, routes));
        for (String want : ifaces) {
            IpAddr ip = IpAddr.tryParse(want);
            for (Iface i : links) {
                if (ip == null && i.name().equals(want)) return Optional.of(new Picked(i, null));
                if (ip != null && stack != Stack.IPV6 && i.v4().contains(ip)) return Optional.of(new Picked(i, ip));
                if (ip != null && stack == Stack.IPV6 && i.holdsV6(ip)) return Optional.of(new Picked(i, null, ip));
            }
            miss.accept("could not find valid interface matching " + want);
        }
        for (String re : regexes) {
            Pattern p = Pattern.compile(re);
            for (Iface i : links) {
                IpAddr v4 = stack.hasV4() ? firstMatch(p, i.v4()) : null, v6 = stack.hasV6() ? firstMatch(p, i.usableV6()) : null;
                // a dual-stack interface matches by address only when an address of each family does, as in flanneld
                if ((v4 != null || !stack.hasV4()) && (v6 != null || !stack.hasV6())) return Optional.of(new Picked(i, v4, v6));
            }
            for (Iface i : links) {
                if (p.matcher(i.name()).find()) return Optional.of(new Picked(i, null));
            }
            List<String> available = new ArrayList<>();
            for (Iface i : links) available.add(i.name() + ":" + goList(stack == Stack.IPV6 ? i.usableV6() : i.v4()));
            miss.accept("could not match pattern " + re + " to any of the available network interfaces (" + String.join(", ", available) + ")");
        }
        if (!canReach.isEmpty()) {
            IpAddr to = IpAddr.parse(canReach);
            RouteFact r = best(routes, to.isV6(), to);
            Iface i = r == null ? null : byIndex(links, r.oif());
            // flanneld takes the route of the target's family in every stack; its source is the IPv4
            // address only when both are IPv4 (flanneld would publish an IPv6 source as PublicIP, and
            // an IPv6-only network's public address is the interface's first IPv6 address there)
            if (i != null) return Optional.of(new Picked(i, stack.hasV4() && !to.isV6() ? r.src() : null));
            miss.accept("could not find valid interface matching ifaceCanReach: " + canReach + ": no route to it");
        }
        return Optional.empty();
    }

    /** No option given: the default route's interface of each family the network has; one interface for both. */
    private static Picked byDefaultRoutes(Stack stack, List<Iface> links, List<RouteFact> routes) {
        Iface v4 = null, v6 = null;
        if (stack.hasV4()) {
            RouteFact r = best(routes, false, null);
            v4 = r == null ? null : byIndex(links, r.oif());
            if (v4 == null) throw new IllegalArgumentException("no --iface given and no default route to find one");
        }
        if (stack.hasV6()) {
            RouteFact r = best(routes, true, null);
            v6 = r == null ? null : byIndex(links, r.oif());
            if (v6 == null) {
                throw new IllegalArgumentException("no --iface given and no IPv6 default route (::/0 in the main table) to find one"
                        + (stack == Stack.DUAL ? " (a dual-stack network needs both default routes, as in flanneld)" : ""));
            }
        }
        if (v4 != null && v6 != null && v4.index() != v6.index()) {
            throw new IllegalArgumentException("v6 default route interface " + v6.name() + " must be the same with v4 default route interface " + v4.name());
        }
        return new Picked(v4 != null ? v4 : v6, null);
    }

    /**
     * The route the kernel would take to {@code to} in the main table of its family (longest
     * prefix, then lowest metric); null {@code to}: the default route of the family {@code v6} says.
     */
    static RouteFact best(List<RouteFact> routes, boolean v6, IpAddr to) {
        RouteFact best = null;
        for (RouteFact r : routes) {
            if (r.oif() <= 0 || r.dst().isV6() != v6) continue;
            if (to == null ? r.dst().prefix() != 0 : !r.dst().contains(to)) continue;
            if (best == null || r.dst().prefix() > best.dst().prefix()
                    || (r.dst().prefix() == best.dst().prefix() && r.priority() < best.priority())) {
                best = r;
            }
        }
        return best;
    }

    /**
     * The public IPv6 address: {@code --public-ipv6}; else the address the choice found; else the
     * interface's first as flanneld orders them. flanneld would publish a link-local one when it
     * finds no other; other hosts cannot send to it (an FDB destination or a gateway carries no
     * zone), so that is refused, naming what to give instead.
     */
    static IpAddr publicIpv6(String flag, Picked picked) {
        if (!flag.isEmpty()) return IpAddr.parse(flag);
        String name = picked.iface().name();
        if (picked.address6() != null) {
            if (picked.address6().isLinkLocalUnicast()) {
                throw new IllegalArgumentException("the IPv6 address " + picked.address6() + " chosen on interface " + name
                        + " is link-local: other hosts cannot reach it (choose a global one, or give --public-ipv6)");
            }
            return picked.address6();
        }
        List<IpAddr> usable = picked.iface().usableV6();
        if (usable.isEmpty() || usable.getFirst().isLinkLocalUnicast()) {
            throw new IllegalArgumentException("interface " + name + " has no global IPv6 address (EnableIPv6 needs one, or --public-ipv6)");
        }
        return usable.getFirst();
    }

    /** Unicast as flanneld keeps it: Go's IsGlobalUnicast or IsLinkLocalUnicast (not unspecified, loopback or multicast). */
    static boolean unicast(IpAddr a) {
        byte[] b = a.bytes();
        boolean unspecified = true;
        for (byte x : b) unspecified &= x == 0;
        boolean multicast = a.isV6() ? (b[0] & 0xff) == 0xff : (b[0] & 0xf0) == 0xe0;
        return !unspecified && !multicast && !a.isLoopback();
    }

    private static IpAddr firstMatch(Pattern p, List<IpAddr> addrs) {
        for (IpAddr a : addrs) if (p.matcher(a.toString()).find()) return a;
        return null;
    }

    /** A list of addresses as Go's %v prints a []net.IP: "[a b]". */
    private static String goList(List<IpAddr> addrs) {
        StringBuilder s = new StringBuilder("[");
        for (IpAddr a : addrs) s.append(s.length() > 1 ? " " : "").append(a);
        return s.append(']').toString();
    }

    private static Iface byIndex(List<Iface> links, int index) {
        for (Iface i : links) if (i.index() == index) return i;
        return null;
    }
}
