package io.jcni.overlay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** --iface, --iface-regex and --iface-can-reach picked in flanneld's order. */
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
        return c.pick(LINKS, ROUTES, misses::add).orElse(null);
    }

    @Test
    void noFlagsTakesTheDefaultRoutesInterface() {
        assertEquals(new UnderlayChoice.Picked(ETH0, null), pick(UnderlayChoice.DEFAULT_ROUTE, new ArrayList<>()));
        assertTrue(UnderlayChoice.DEFAULT_ROUTE.pick(LINKS, ROUTES.subList(1, 4), s -> {}).isEmpty(), "no default route: none");
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
        assertTrue(new UnderlayChoice(List.of(), List.of(), "8.8.8.8").pick(LINKS, ROUTES.subList(1, 4), misses::add).isEmpty());
        assertThrows(IllegalArgumentException.class, () -> new UnderlayChoice(List.of(), List.of(), "not-an-ip"));
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
