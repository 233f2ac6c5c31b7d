package io.jcni.linux;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Optional;

/**
 * An rtnetlink client bound to one network namespace: links, addresses, routes, neighbours, FDB
 * entries and policy rules; {@link #tc()} adds traffic control. Every change is acknowledged by the
 * kernel before the method returns; failures are {@link ErrnoException}s such as
 * {@code add link veth0: EEXIST (File exists)}.
 *
 * <p>The one entry point: each object family's requests live in its own package-private part
 * ({@link RtnlLinks}, {@link RtnlAddresses}, {@link RtnlRoutes}, {@link RtnlNeighbors}).
 *
 * <pre>{@code
 * try (Netns ns = Netns.open("/var/run/netns/c1"); Rtnl rt = Rtnl.open(ns)) {
 *     rt.addLink(NewLink.veth("eth0", "veth1234").peerNamespace(hostNs).mtu(1500));
 *     Link eth0 = rt.link("eth0");
 *     rt.setUp(eth0.index());
 *     rt.addAddress(eth0.index(), ip, 24, false);
 *     rt.addRoute(Route.defaultVia(gw).dev(eth0.index()));
 * }
 * }</pre>
 */
public final class Rtnl implements AutoCloseable {
    private final NetlinkSocket socket;
    private final RtnlLinks links;
    private final RtnlAddresses addresses;
    private final RtnlRoutes routes;
    private final RtnlNeighbors neighbors;
    private Tc tc;

    private Rtnl(NetlinkSocket socket) {
        this.socket = socket;
        this.links = new RtnlLinks(socket);
        this.addresses = new RtnlAddresses(socket);
        this.routes = new RtnlRoutes(socket);
        this.neighbors = new RtnlNeighbors(socket);
    }

    /** A client for the calling thread's namespace. */
    public static Rtnl open() {
        return new Rtnl(NetlinkSocket.open(NetlinkSocket.NETLINK_ROUTE));
    }

    /** A client for {@code ns}, usable from any thread. */
    public static Rtnl open(Netns ns) {
        return new Rtnl(NetlinkSocket.open(NetlinkSocket.NETLINK_ROUTE, ns));
    }

    public NetlinkSocket socket() {
        return socket;
    }

    /** Traffic control (qdiscs and filters) over this client's socket. */
    public synchronized Tc tc() {
        if (tc == null) tc = new Tc(socket);
        return tc;
    }

    @Override
    public void close() {
        socket.close();
    }

    // ---------------------------------------------------------------- links
    public List<Link> links() {
        return links.links();
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public Link link(String name) {
        return links.link(name);
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public Link link(int index) {
        return links.link(index);
    }

    /** The VXLAN parameters of link {@code index}; empty when it is not a vxlan device. @throws ErrnoException ENODEV if there is no such link */
    public Optional<VxlanParams> vxlanParams(int index) {
        return links.vxlanParams(index);
    }

    public Optional<Link> findLink(String name) {
        return links.findLink(name);
    }

    /** The link with its kind-specific settings (macvlan/ipvlan mode, VLAN id). @throws ErrnoException ENODEV if there is none */
    public LinkInfo linkInfo(String name) {
        return links.linkInfo(name);
    }

    /**
     * @throws ErrnoException EEXIST if the name is taken; EOPNOTSUPP if the kernel has no driver for
     *     the link's kind (its extended ACK says "Unknown device type")
     */
    public void addLink(NewLink spec) {
        links.addLink(spec);
    }

    /**
     * A veth pair {@code name}/{@code peerName}; the peer is created directly in {@code peerNs}
     * when that is not null. {@code mtu} 0 and {@code mac} null leave kernel defaults.
     */
    public void addVeth(String name, String peerName, Netns peerNs, int mtu, MacAddress mac) {
        links.addVeth(name, peerName, peerNs, mtu, mac);
    }

    public void deleteLink(int index) {
        links.deleteLink(index);
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public void deleteLink(String name) {
        links.deleteLink(name);
    }

    /**
     * Deletes every link of device group {@code group} (IFLA_GROUP) with one request: the kernel
     * unregisters them together, paying its RCU grace periods once for all of them.
     *
     * @throws ErrnoException ENODEV if no link is in the group
     */
    public void deleteGroup(int group) {
        links.deleteGroup(group);
    }

    /**
     * Deletes every link in device group {@code group} of the calling thread's namespace about
     * {@code delayMillis} from now, from a detached process, and returns at once: for a process
     * that ends right after its answer (a standalone plugin) while the kernel's deletion takes tens
     * of milliseconds. Nobody learns the outcome; nothing left in the group is the usual one.
     */
    public static void deleteGroupDetached(int group, int delayMillis) {
        RtnlLinks.deleteGroupDetached(group, delayMillis);
    }

    /** Puts the link in device group {@code group} (IFLA_GROUP; 0 is the default group). */
    public void setGroup(int index, int group) {
        links.setGroup(index, group);
    }

    public void setUp(int index) {
        links.setUp(index);
    }

    public void setDown(int index) {
        links.setDown(index);
    }

    public void setPromisc(int index, boolean on) {
        links.setPromisc(index, on);
    }

    public void setAllmulti(int index, boolean on) {
        links.setAllmulti(index, on);
    }

    /** ARP on or off (IFF_NOARP), {@code ip link set X arp on|off}. */
    public void setArp(int index, boolean on) {
        links.setArp(index, on);
    }

    public void setMtu(int index, int mtu) {
        links.setMtu(index, mtu);
    }

    public void setMac(int index, MacAddress mac) {
        links.setMac(index, mac);
    }

    public void setTxqlen(int index, int txqlen) {
        links.setTxqlen(index, txqlen);
    }

    public void setAlias(int index, String alias) {
        links.setAlias(index, alias);
    }

    /**
     * Sets the alias and moves the link to device group {@code group} in one request: the kernel
     * applies both under one hold of its rtnl lock, the alias first, so no reader ever sees the
     * link in its new group without the alias.
     */
    public void setAliasAndGroup(int index, String alias, int group) {
        links.setAliasAndGroup(index, alias, group);
    }

    public void rename(int index, String name) {
        links.rename(index, name);
    }

    /** Enslaves {@code index} to {@code masterIndex} (e.g. a bridge). */
    public void setMaster(int index, int masterIndex) {
        links.setMaster(index, masterIndex);
    }

    public void setNoMaster(int index) {
        links.setNoMaster(index);
    }

    /** Moves the link into {@code ns}; its index may change there. */
    public void setNamespace(int index, Netns ns) {
        links.setNamespace(index, ns);
    }

    public void setNamespaceFd(int index, int nsFd) {
        links.setNamespaceFd(index, nsFd);
    }

    /** Bridge-port hairpin mode ({@code bridge link set dev X hairpin on}). */
    public void setHairpin(int index, boolean on) {
        links.setHairpin(index, on);
    }

    /** Bridge-port isolation ({@code bridge link set dev X isolated on}). */
    public void setIsolated(int index, boolean on) {
        links.setIsolated(index, on);
    }

    public void setLearning(int index, boolean on) {
        links.setLearning(index, on);
    }

    /** @throws ErrnoException ENODEV if {@code index} is not a bridge port */
    public BridgePort bridgePort(int index) {
        return links.bridgePort(index);
    }

    /**
     * {@code bridge vlan add dev X vid V [pvid] [untagged] [self]}: on a bridge port, or with
     * {@code self} on the bridge device itself. The bridge needs VLAN filtering on.
     */
    public void addBridgeVlan(int index, int vid, boolean pvid, boolean untagged, boolean self) {
        links.addBridgeVlan(index, vid, pvid, untagged, self);
    }

    public void deleteBridgeVlan(int index, int vid, boolean self) {
        links.deleteBridgeVlan(index, vid, self);
    }

    /** The VLANs of a bridge port (or of the bridge itself); empty when it has none. */
    public List<BridgeVlan> bridgeVlans(int index) {
        return links.bridgeVlans(index);
    }

    // ---------------------------------------------------------------- addresses
    /**
     * Adds {@code address}/{@code prefixLength} to the link. {@code nodad} skips IPv6 duplicate
     * address detection (IFA_F_NODAD) so the address is usable at once. IPv4 addresses get the
     * broadcast address computed, as the Go netlink library does for the reference plugins.
     *
     * @throws ErrnoException EEXIST if the address is already there
     */
    public void addAddress(int index, IpAddr address, int prefixLength, boolean nodad) {
        addresses.addAddress(index, address, prefixLength, nodad);
    }

    public void addAddress(int index, Cidr prefix) {
        addresses.addAddress(index, prefix);
    }

    /** @throws ErrnoException EADDRNOTAVAIL if the link has no such address */
    public void deleteAddress(int index, IpAddr address, int prefixLength) {
        addresses.deleteAddress(index, address, prefixLength);
    }

    /** Addresses of one link ({@code index} 0: of all links) in {@code family}. */
    public List<Address> addresses(int index, Family family) {
        return addresses.addresses(index, family);
    }

    /**
     * Waits until no IPv6 address of the link is tentative any more (duplicate address detection
     * finished), as the reference IPAM code does before using a new address.
     *
     * @throws ErrnoException ETIMEDOUT when addresses are still tentative after {@code timeoutMillis};
     *     EADDRNOTAVAIL when DAD failed for one
     */
    public void settleAddresses(int index, long timeoutMillis) {
        addresses.settleAddresses(index, timeoutMillis);
    }

    // ---------------------------------------------------------------- routes
    /** @throws ErrnoException EEXIST if an equal route exists */
    public void addRoute(Route route) {
        routes.addRoute(route);
    }

    /** Adds or overwrites ({@code ip route replace}). */
    public void replaceRoute(Route route) {
        routes.replaceRoute(route);
    }

    /** @throws ErrnoException ESRCH if no route matches */
    public void deleteRoute(Route route) {
        routes.deleteRoute(route);
    }

    /** Routes of {@code family} in every table, without cached clones. */
    public List<Route> routes(Family family) {
        return routes.routes(family);
    }

    public List<Route> routes(Family family, int table) {
        return routes.routes(family, table);
    }

    // ---------------------------------------------------------------- nexthop objects
    /**
     * {@code ip nexthop add}. @throws ErrnoException EEXIST if the id is taken; on a kernel without
     *     nexthop objects (before 5.3) EOPNOTSUPP or EINVAL
     */
    public void addNexthop(Nexthop nh) {
        routes.addNexthop(nh);
    }

    /** {@code ip nexthop replace}: creates it or changes it in place; routes through it follow at once. */
    public void replaceNexthop(Nexthop nh) {
        routes.replaceNexthop(nh);
    }

    /** {@code ip nexthop del id N}: the routes through it go with it. @throws ErrnoException ENOENT if there is none */
    public void deleteNexthop(int id) {
        routes.deleteNexthop(id);
    }

    /** {@code ip nexthop get id N}; empty when there is none. */
    public Optional<Nexthop> nexthop(int id) {
        return routes.nexthop(id);
    }

    /** Every nexthop object of the namespace ({@code ip nexthop show}). */
    public List<Nexthop> nexthops() {
        return routes.nexthops();
    }

    /** Sends {@code changes}; per change, in order, null (done) or its error. */
    public List<ErrnoException> apply(RtnlChanges changes) {
        return changes.sendOn(socket);
    }

    // ---------------------------------------------------------------- rules
    /** @throws ErrnoException EEXIST if an identical rule exists */
    public void addRule(Rule rule) {
        routes.addRule(rule);
    }

    /** @throws ErrnoException ENOENT if no rule matches */
    public void deleteRule(Rule rule) {
        routes.deleteRule(rule);
    }

    public List<Rule> rules(Family family) {
        return routes.rules(family);
    }

    // ---------------------------------------------------------------- neighbours and FDB
    /** @throws ErrnoException EEXIST if an entry for the address exists */
    public void addNeighbor(Neighbor n) {
        neighbors.addNeighbor(n);
    }

    public void replaceNeighbor(Neighbor n) {
        neighbors.replaceNeighbor(n);
    }

    public void deleteNeighbor(Neighbor n) {
        neighbors.deleteNeighbor(n);
    }

    /** ARP/NDP entries of one link ({@code index} 0: all) in {@code family}. */
    public List<Neighbor> neighbors(int index, Family family) {
        return neighbors.neighbors(index, family);
    }

    /** {@code bridge fdb add}; for VXLAN use {@link Neighbor#fdb}. */
    public void addFdb(Neighbor entry) {
        neighbors.addFdb(entry);
    }

    /** {@code bridge fdb append}: another remote for the same MAC, e.g. all-zero flood entries. */
    public void appendFdb(Neighbor entry) {
        neighbors.appendFdb(entry);
    }

    public void deleteFdb(Neighbor entry) {
        neighbors.deleteFdb(entry);
    }

    /** FDB entries of one link ({@code index} 0: all). */
    public List<Neighbor> fdb(int index) {
        return neighbors.fdb(index);
    }
}
