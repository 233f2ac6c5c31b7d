package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** --iface, --iface-regex and --iface-can-reach picked in flanneld's order, for IPv4, IPv6-only and dual-stack networks. */
class UnderlayChoiceTest {
    private static final UnderlayChoice.Iface LO = new UnderlayChoice.Iface(1, "lo", List.of(IpAddr.parse("127.0.0.1")));
    private static final UnderlayChoice.Iface ETH0 = new UnderlayChoice.Iface(2, "eth0", List.of(IpAddr.parse("10.0.0.5")));
    private static final UnderlayChoice.Iface ENS = new UnderlayChoice.Iface(3, "ens4", List.of(IpAddr.parse("192.168.1.7"), IpAddr.parse("172.16.0.7")));
    private static final List<UnderlayChoice.Iface> LINKS = List.of(LO, ETH0, ENS);
    private static final List<UnderlayChoice.RouteFact> ROUTES = List.of(
            new UnderlayChoice.RouteFact(Cidr.parse("0.0.0.0/0"), 2, 0, null),
            new UnderlayChoice.RouteFact(Cidr.parse("10.0.0.0/24"), 2, 0, IpAddr.parse("10.0.0.5")),
            new UnderlayChoice.RouteFact(Cidr.parse("192.168.0.0/16"), 3, 100, null),
            new UnderlayChoice.RouteFact(Cidr.parse("192.168.1.0/24"), 3, 0, IpAddr.parse("192.168.1.7")));

    private static UnderlayChoice.Picked pick(UnderlayChoice c, List<String> misses) {
        return c.pick(UnderlayChoice.Stack.IPV4, LINKS, ROUTES, misses::add).orElse(null);
    }

    @Test
    void noFlagsTakesTheDefaultRoutesInterface() {
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(UnderlayChoice.DEFAULT_ROUTE, new ArrayList<>()));
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> UnderlayChoice.DEFAULT_ROUTE.pick(UnderlayChoice.Stack.IPV4, LINKS, ROUTES.subList(1, 4), s -> {}), "no default route: none");
        assertEquals("no --iface given and no default route to find one", none.getMessage());
    }

    @Test
    void ifaceByNameOrAddressInOrder() {
        List<String> misses = new ArrayList<>();
        assertEquals(new UnderlayChoice.Picked(ENS, IpAddr.parse("172.16.0.7")),
                pick(new UnderlayChoice(List.of("wlan9", "172.16.0.7", "eth0"), List.of(), ""), misses));
        assertEquals(List.of("could not find valid interface matching wlan9"), misses);
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(new UnderlayChoice(List.of("eth0"), List.of(), ""), misses));
    }

    @Test
    void regexMatchesAddressesFirstThenNames() {
        List<String> misses = new ArrayList<>();
        // an address match wins over a name match on an earlier interface; the matched address is the one used
        assertEquals(new UnderlayChoice.Picked(ENS, IpAddr.parse("172.16.0.7")), pick(new UnderlayChoice(List.of(), List.of("^172\\.16\\."), ""), misses));
        assertEquals(new UnderlayChoice.Picked(ENS, null), pick(new UnderlayChoice(List.of(), List.of("ens[0-9]+"), ""), misses));
        assertEquals(new UnderlayChoice.Picked(ETH0, IpAddr.parse("10.0.0.5")), pick(new UnderlayChoice(List.of(), List.of("0\\.0\\.5"), ""), misses), "unanchored");
        assertEquals(List.of(), misses);
        // regexes in order, after every --iface
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(new UnderlayChoice(List.of("nope"), List.of("^wl", "^eth"), ""), misses));
        assertEquals(2, misses.size());
        assertTrue(misses.get(1).startsWith("could not match pattern ^wl to any of the available network interfaces (lo:[127.0.0.1], eth0:"), misses.get(1));
        assertThrows(IllegalArgumentException.class, () -> new UnderlayChoice(List.of(), List.of("(unclosed"), ""));
    }

    @Test
    void canReachTakesTheRoutesInterfaceAndSource() {
        List<String> misses = new ArrayList<>();
        assertEquals(new UnderlayChoice.Picked(ENS, IpAddr.parse("192.168.1.7")), pick(new UnderlayChoice(List.of(), List.of(), "192.168.1.200"), misses));
        assertEquals(new UnderlayChoice.Picked(ENS, null), pick(new UnderlayChoice(List.of(), List.of(), "192.168.9.9"), misses), "longest prefix");
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(new UnderlayChoice(List.of(), List.of(), "8.8.8.8"), misses), "the default route");
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(new UnderlayChoice(List.of("zz"), List.of("^zz"), "8.8.8.8"), misses), "after the others");
        assertTrue(new UnderlayChoice(List.of(), List.of(), "8.8.8.8").pick(UnderlayChoice.Stack.IPV4, LINKS, ROUTES.subList(1, 4), misses::add).isEmpty());
        assertThrows(IllegalArgumentException.class, () -> new UnderlayChoice(List.of(), List.of(), "not-an-ip"));
    }

    // An IPv6 snapshot: eth0 holds a link-local address listed before its global one; ens4 a
    // SLAAC (not permanent) address before a configured one, a temporary and a deprecated one;
    // wg0 only a link-local one. No IPv4 default route anywhere.
    private static final int DYNAMIC = 0, TEMPORARY = 0x01, DEPRECATED = 0x20;
    private static final UnderlayChoice.Iface LO6 = new UnderlayChoice.Iface(1, "lo", List.of(IpAddr.parse("127.0.0.1")), List.of(new UnderlayChoice.Addr6("::1")));
    private static final UnderlayChoice.Iface ETH6 = new UnderlayChoice.Iface(2, "eth0", List.of(IpAddr.parse("10.0.0.5")),
            List.of(new UnderlayChoice.Addr6("fe80::5"), new UnderlayChoice.Addr6("2001:db8:1::5")));
    private static final UnderlayChoice.Iface ENS6 = new UnderlayChoice.Iface(3, "ens4", List.of(), List.of(
            new UnderlayChoice.Addr6(IpAddr.parse("2001:db8:7::dead"), DEPRECATED),
            new UnderlayChoice.Addr6(IpAddr.parse("2001:db8:7::99"), TEMPORARY),
            new UnderlayChoice.Addr6(IpAddr.parse("2001:db8:7::7"), DYNAMIC),
            new UnderlayChoice.Addr6("fd00:7::7")));
    private static final UnderlayChoice.Iface WG6 = new UnderlayChoice.Iface(4, "wg0", List.of(), List.of(new UnderlayChoice.Addr6("fe80::4")));
    private static final List<UnderlayChoice.Iface> LINKS6 = List.of(LO6, ETH6, ENS6, WG6);
    private static final List<UnderlayChoice.RouteFact> ROUTES6 = List.of(
            new UnderlayChoice.RouteFact(Cidr.parse("10.0.0.0/24"), 2, 0, IpAddr.parse("10.0.0.5")),
            new UnderlayChoice.RouteFact(Cidr.parse("::/0"), 3, 1024, null),
            new UnderlayChoice.RouteFact(Cidr.parse("::/0"), 2, 100, null),
            new UnderlayChoice.RouteFact(Cidr.parse("2001:db8:1::/64"), 2, 256, null),
            new UnderlayChoice.RouteFact(Cidr.parse("2001:db8:7::/64"), 3, 256, IpAddr.parse("2001:db8:7::99")),
            new UnderlayChoice.RouteFact(Cidr.parse("2001:db8::/32"), 3, 100, null));
    private static final List<UnderlayChoice.RouteFact> NO_DEFAULT6 = ROUTES6.stream().filter(r -> r.dst().prefix() != 0).toList();

    private static UnderlayChoice.Picked pick6(UnderlayChoice c, List<String> misses) {
        return c.pick(UnderlayChoice.Stack.IPV6, LINKS6, ROUTES6, misses::add).orElse(null);
    }

    private static UnderlayChoice choice(List<String> ifaces, List<String> regexes, String canReach) {
        return new UnderlayChoice(ifaces, regexes, canReach);
    }

    @Test
    void ipv6OnlyWithoutFlagsTakesTheIpv6DefaultRoutesInterfaceAndItsFirstGlobalAddress() {
        UnderlayChoice.Picked p = pick6(UnderlayChoice.DEFAULT_ROUTE, new ArrayList<>());
        assertEquals(new UnderlayChoice.Picked(ETH6, null, null), p, "::/0 with the lowest metric; no IPv4 default route needed");
        assertEquals(IpAddr.parse("2001:db8:1::5"), UnderlayChoice.publicIpv6("", p), "global before link-local, whatever the kernel's order");
        assertEquals(IpAddr.parse("fd00::1"), UnderlayChoice.publicIpv6("fd00::1", p), "--public-ipv6 wins");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> UnderlayChoice.DEFAULT_ROUTE.pick(UnderlayChoice.Stack.IPV6, LINKS6, NO_DEFAULT6, s -> {}));
        assertEquals("no --iface given and no IPv6 default route (::/0 in the main table) to find one", e.getMessage());
        // an IPv4 default route does not serve an IPv6-only network
        assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.DEFAULT_ROUTE.pick(UnderlayChoice.Stack.IPV6, LINKS, ROUTES, s -> {}));
    }

    @Test
    void ipv6OnlyIfaceByIpv6AddressOrName() {
        List<String> misses = new ArrayList<>();
        // an IPv4 address is no IPv6 network's interface address, as flanneld's GetInterfaceByIP6
        UnderlayChoice.Picked p = pick6(choice(List.of("10.0.0.5", "2001:db8:7::7"), List.of(), ""), misses);
        assertEquals(new UnderlayChoice.Picked(ENS6, null, IpAddr.parse("2001:db8:7::7")), p);
        assertEquals(List.of("could not find valid interface matching 10.0.0.5"), misses);
        assertEquals(IpAddr.parse("2001:db8:7::7"), UnderlayChoice.publicIpv6("", p), "the --iface address is the public one");
        // by name: the interface's first address as flanneld orders them: configured before SLAAC, temporary after, deprecated never
        UnderlayChoice.Picked byName = pick6(choice(List.of("ens4"), List.of(), ""), misses);
        assertEquals(new UnderlayChoice.Picked(ENS6, null, null), byName);
        assertEquals(List.of(IpAddr.parse("fd00:7::7"), IpAddr.parse("2001:db8:7::7"), IpAddr.parse("2001:db8:7::99")), ENS6.usableV6());
        assertEquals(IpAddr.parse("fd00:7::7"), UnderlayChoice.publicIpv6("", byName));
        // a deprecated address still names its interface (flanneld matches every IPv6 address there)
        assertEquals(new UnderlayChoice.Picked(ENS6, null, IpAddr.parse("2001:db8:7::dead")), pick6(choice(List.of("2001:db8:7::dead"), List.of(), ""), misses));
    }

    @Test
    void ipv6OnlyLinkLocalIsRefusedAsThePublicAddress() {
        // flanneld would publish fe80::4: no other host can send to it without a zone
        UnderlayChoice.Picked byAddress = pick6(choice(List.of("fe80::4"), List.of(), ""), new ArrayList<>());
        assertEquals(new UnderlayChoice.Picked(WG6, null, IpAddr.parse("fe80::4")), byAddress);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.publicIpv6("", byAddress));
        assertEquals("the IPv6 address fe80::4 chosen on interface wg0 is link-local: other hosts cannot reach it (choose a global one, or give --public-ipv6)",
                e.getMessage());
        UnderlayChoice.Picked byName = pick6(choice(List.of("wg0"), List.of(), ""), new ArrayList<>());
        e = assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.publicIpv6("", byName));
        assertEquals("interface wg0 has no global IPv6 address (EnableIPv6 needs one, or --public-ipv6)", e.getMessage());
        assertEquals(IpAddr.parse("2001:db8::4"), UnderlayChoice.publicIpv6("2001:db8::4", byName), "--public-ipv6 makes it usable");
        UnderlayChoice.Picked noAddress = pick6(choice(List.of("lo"), List.of(), ""), new ArrayList<>());
        assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.publicIpv6("", noAddress), "::1 is not kept");
    }

    @Test
    void ipv6OnlyRegexMatchesIpv6AddressesThenNames() {
        List<String> misses = new ArrayList<>();
        assertEquals(new UnderlayChoice.Picked(ENS6, null, IpAddr.parse("2001:db8:7::7")), pick6(choice(List.of(), List.of("^2001:db8:7::"), ""), misses),
                "the interface's addresses in flanneld's order: the SLAAC one before the temporary one");
        assertEquals(new UnderlayChoice.Picked(ETH6, null, IpAddr.parse("2001:db8:1::5")), pick6(choice(List.of(), List.of("::5$"), ""), misses),
                "unanchored; eth0 comes before ens4");
        assertEquals(new UnderlayChoice.Picked(ENS6, null, null), pick6(choice(List.of(), List.of("^ens"), ""), misses), "then names");
        assertEquals(List.of(), misses);
        // IPv4 addresses, a deprecated address and ::1 are not matched in an IPv6-only network
        assertEquals(null, pick6(choice(List.of(), List.of("^10\\.0\\.0\\.5$", "::dead$", "^::1$"), ""), misses));
        assertEquals(3, misses.size());
        assertEquals("could not match pattern ::dead$ to any of the available network interfaces (lo:[], eth0:[2001:db8:1::5 fe80::5], "
                + "ens4:[fd00:7::7 2001:db8:7::7 2001:db8:7::99], wg0:[fe80::4])", misses.get(1), "flanneld's message, with Go's []net.IP");
        // a link-local match is found, and refused as the public address
        UnderlayChoice.Picked ll = pick6(choice(List.of(), List.of("^fe80::"), ""), misses);
        assertEquals(new UnderlayChoice.Picked(ETH6, null, IpAddr.parse("fe80::5")), ll);
        assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.publicIpv6("", ll));
    }

    @Test
    void ipv6OnlyCanReachTakesTheIpv6RoutesInterface() {
        List<String> misses = new ArrayList<>();
        UnderlayChoice.Picked p = pick6(choice(List.of(), List.of(), "2001:db8:7::1"), misses);
        // flanneld keeps the route's source as its IPv4 address, unused here: the public one is the interface's first
        assertEquals(new UnderlayChoice.Picked(ENS6, null, null), p);
        assertEquals(IpAddr.parse("fd00:7::7"), UnderlayChoice.publicIpv6("", p));
        assertEquals(new UnderlayChoice.Picked(ENS6, null, null), pick6(choice(List.of(), List.of(), "2001:db8:99::1"), misses), "longest prefix");
        assertEquals(new UnderlayChoice.Picked(ETH6, null, null), pick6(choice(List.of(), List.of(), "2606:4700::1"), misses), "the lowest-metric default");
        assertEquals(new UnderlayChoice.Picked(ETH6, null, null), pick6(choice(List.of(), List.of(), "10.0.0.9"), misses),
                "an IPv4 target: the IPv4 route's interface, as flanneld's route lookup");
        assertEquals(List.of(), misses);
        assertTrue(choice(List.of(), List.of(), "2606:4700::1").pick(UnderlayChoice.Stack.IPV6, LINKS6, NO_DEFAULT6, misses::add).isEmpty());
        assertEquals(List.of("could not find valid interface matching ifaceCanReach: 2606:4700::1: no route to it"), misses);
    }

    @Test
    void dualStackFollowsFlanneldsIpStack() {
        List<UnderlayChoice.RouteFact> dual = new ArrayList<>(ROUTES6);
        dual.add(new UnderlayChoice.RouteFact(Cidr.parse("0.0.0.0/0"), 2, 0, null));
        UnderlayChoice.Stack d = UnderlayChoice.Stack.DUAL;
        // no option: both families' default routes, on one interface
        assertEquals(new UnderlayChoice.Picked(ETH6, null, null), UnderlayChoice.DEFAULT_ROUTE.pick(d, LINKS6, dual, s -> {}).orElseThrow());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.DEFAULT_ROUTE.pick(d, LINKS6, ROUTES6, s -> {}));
        assertEquals("no --iface given and no default route to find one", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.DEFAULT_ROUTE.pick(d, LINKS, ROUTES, s -> {}));
        assertTrue(e.getMessage().startsWith("no --iface given and no IPv6 default route"), e.getMessage());
        List<UnderlayChoice.RouteFact> split = new ArrayList<>(NO_DEFAULT6);
        split.add(new UnderlayChoice.RouteFact(Cidr.parse("0.0.0.0/0"), 2, 0, null));
        split.add(new UnderlayChoice.RouteFact(Cidr.parse("::/0"), 3, 0, null));
        e = assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.DEFAULT_ROUTE.pick(d, LINKS6, split, s -> {}));
        assertEquals("v6 default route interface ens4 must be the same with v4 default route interface eth0", e.getMessage());
        // --iface by IPv4 address as before
        assertEquals(new UnderlayChoice.Picked(ETH6, IpAddr.parse("10.0.0.5")),
                choice(List.of("10.0.0.5"), List.of(), "").pick(d, LINKS6, dual, s -> {}).orElseThrow());
        // a regex matches by address only when it matches an address of each family on one interface; else names
        assertEquals(new UnderlayChoice.Picked(ETH6, IpAddr.parse("10.0.0.5"), IpAddr.parse("2001:db8:1::5")),
                choice(List.of(), List.of("5$"), "").pick(d, LINKS6, dual, s -> {}).orElseThrow());
        List<String> misses = new ArrayList<>();
        assertTrue(choice(List.of(), List.of("^10\\."), "").pick(d, LINKS6, dual, misses::add).isEmpty(), "an IPv4-only regex finds nothing");
        assertEquals("could not match pattern ^10\\. to any of the available network interfaces (lo:[127.0.0.1], eth0:[10.0.0.5], ens4:[], wg0:[])",
                misses.getFirst(), "the IPv4 addresses listed, as flanneld");
        // --iface-can-reach: the route of the target's family; an IPv6 route's source is no IPv4 address
        assertEquals(new UnderlayChoice.Picked(ENS6, null), choice(List.of(), List.of(), "2001:db8:7::1").pick(d, LINKS6, dual, s -> {}).orElseThrow());
        assertEquals(new UnderlayChoice.Picked(ETH6, IpAddr.parse("10.0.0.5")), choice(List.of(), List.of(), "10.0.0.1").pick(d, LINKS6, dual, s -> {}).orElseThrow());
        assertEquals(new UnderlayChoice.Picked(ENS6, null),
                choice(List.of(), List.of(), "2001:db8:7::1").pick(UnderlayChoice.Stack.IPV4, LINKS6, dual, s -> {}).orElseThrow(), "IPv4-only too");
    }

    @Test
    void stackFromTheConfigsFamilies() {
        assertEquals(UnderlayChoice.Stack.IPV4, UnderlayChoice.Stack.of(true, false));
        assertEquals(UnderlayChoice.Stack.IPV6, UnderlayChoice.Stack.of(false, true));
        assertEquals(UnderlayChoice.Stack.DUAL, UnderlayChoice.Stack.of(true, true));
        assertThrows(IllegalArgumentException.class, () -> UnderlayChoice.Stack.of(false, false));
    }

    @Test
    void agentFlags() {
        AgentOptions o = AgentOptions.parse(List.of("--iface", "wlan0", "--iface", "eth1", "--iface-regex", "^10\\.", "--iface-regex", "ens.*",
                "--iface-can-reach", "192.0.2.1"));
        assertEquals(new UnderlayChoice(List.of("wlan0", "eth1"), List.of("^10\\.", "ens.*"), "192.0.2.1"), o.underlayChoice());
        assertEquals("wlan0", o.iface());
        assertTrue(AgentOptions.parse(List.of()).underlayChoice().isDefaultRoute());
    }

    @Test
    void directRoutingOnlyForHostsOnAConnectedNetwork() {
        List<Cidr> connected = List.of(Cidr.parse("192.168.77.0/24"), Cidr.parse("10.9.0.0/16"));
        assertTrue(Dataplane.onLink(IpAddr.parse("192.168.77.12"), connected));
        assertTrue(Dataplane.onLink(IpAddr.parse("10.9.200.1"), connected));
        assertEquals(false, Dataplane.onLink(IpAddr.parse("192.168.78.12"), connected));
        assertEquals(false, Dataplane.onLink(IpAddr.parse("8.8.8.8"), List.of(Cidr.parse("0.0.0.0/0"))), "a default route is not a connected network");
    }
}
