package io.jcni.linux;

import static io.jcni.linux.NetlinkSocket.NLM_F_APPEND;
import static io.jcni.linux.NetlinkSocket.NLM_F_CREATE;
import static io.jcni.linux.NetlinkSocket.NLM_F_EXCL;
import static io.jcni.linux.NetlinkSocket.NLM_F_REPLACE;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * An rtnetlink client bound to one network namespace: links, addresses, routes, neighbours, FDB
 * entries and policy rules; {@link #tc()} adds traffic control. Every change is acknowledged by the
 * kernel before the method returns; failures are {@link ErrnoException}s such as
 * {@code add link veth0: EEXIST (File exists)}.
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
    private Tc tc;

    private Rtnl(NetlinkSocket socket) {
        this.socket = socket;
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
        List<Link> links = new ArrayList<>();
        for (NlMsg m : socket.dump(ifinfo(Rtm.RTM_GETLINK, 0, 0, 0), "list links")) {
            if (m.type() == Rtm.RTM_NEWLINK) links.add(Link.decode(m));
        }
        return links;
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public Link link(String name) {
        NlMessage m = ifinfo(Rtm.RTM_GETLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name);
        return single(socket.request(m, "get link " + name), "get link " + name);
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public Link link(int index) {
        return single(socket.request(ifinfo(Rtm.RTM_GETLINK, 0, index, 0), "get link " + index), "get link " + index);
    }

    /** The VXLAN parameters of link {@code index}; empty when it is not a vxlan device. @throws ErrnoException ENODEV if there is no such link */
    public Optional<VxlanParams> vxlanParams(int index) {
        String op = "get link " + index;
        for (NlMsg m : socket.request(ifinfo(Rtm.RTM_GETLINK, 0, index, 0), op)) {
            if (m.type() == Rtm.RTM_NEWLINK) return Optional.ofNullable(VxlanParams.decode(m));
        }
        throw new ErrnoException(Errno.ENODEV, op, "no link in the reply", null);
    }

    public Optional<Link> findLink(String name) {
        try {
            return Optional.of(link(name));
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return Optional.empty();
            throw e;
        }
    }

    /** The link with its kind-specific settings (macvlan/ipvlan mode, VLAN id). @throws ErrnoException ENODEV if there is none */
    public LinkInfo linkInfo(String name) {
        NlMessage m = ifinfo(Rtm.RTM_GETLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name);
        for (NlMsg r : socket.request(m, "get link " + name)) if (r.type() == Rtm.RTM_NEWLINK) return LinkInfo.decode(r);
        throw new ErrnoException(Errno.ENODEV, "get link " + name, "no link in the reply", null);
    }

    /**
     * @throws ErrnoException EEXIST if the name is taken; EOPNOTSUPP if the kernel has no driver for
     *     the link's kind (its extended ACK says "Unknown device type")
     */
    public void addLink(NewLink spec) {
        socket.request(newLinkRequest(spec), "add link " + spec.name());
    }

    /** The RTM_NEWLINK request for {@code spec}, before the socket adds REQUEST|ACK, seq and port id. */
    static NlMessage newLinkRequest(NewLink spec) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
        spec.encode(m);
        return m;
    }

    /**
     * A veth pair {@code name}/{@code peerName}; the peer is created directly in {@code peerNs}
     * when that is not null. {@code mtu} 0 and {@code mac} null leave kernel defaults.
     */
    public void addVeth(String name, String peerName, Netns peerNs, int mtu, MacAddress mac) {
        NewLink spec = NewLink.veth(name, peerName).mtu(mtu).mac(mac);
        if (peerNs != null) spec.peerNamespace(peerNs);
        addLink(spec);
    }

    public void deleteLink(int index) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, index, 0), "delete link " + index);
    }

    /** @throws ErrnoException ENODEV if there is no such link */
    public void deleteLink(String name) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrString(Rtm.IFLA_IFNAME, name), "delete link " + name);
    }

    /**
     * Deletes every link of device group {@code group} (IFLA_GROUP) with one request: the kernel
     * unregisters them together, paying its RCU grace periods once for all of them.
     *
     * @throws ErrnoException ENODEV if no link is in the group
     */
    public void deleteGroup(int group) {
        socket.request(ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrU32(Rtm.IFLA_GROUP, group), "delete link group " + group);
    }

    /**
     * Deletes every link in device group {@code group} of the calling thread's namespace about
     * {@code delayMillis} from now, from a detached process, and returns at once: for a process
     * that ends right after its answer (a standalone plugin) while the kernel's deletion takes tens
     * of milliseconds. Nobody learns the outcome; nothing left in the group is the usual one.
     */
    public static void deleteGroupDetached(int group, int delayMillis) {
        ByteBuffer m = ifinfo(Rtm.RTM_DELLINK, 0, 0, 0).attrU32(Rtm.IFLA_GROUP, group).finish(1, 0);
        m.putShort(6, (short) (NetlinkSocket.NLM_F_REQUEST | NetlinkSocket.NLM_F_ACK));
        byte[] bytes = new byte[m.remaining()];
        m.get(bytes);
        Native.sendDetached(bytes, delayMillis);
    }

    /** Puts the link in device group {@code group} (IFLA_GROUP; 0 is the default group). */
    public void setGroup(int index, int group) {
        setlink(index, "set link " + index + " group " + group).attrU32(Rtm.IFLA_GROUP, group).send();
    }

    public void setUp(int index) {
        setFlag(index, Link.IFF_UP, true, "set link " + index + " up");
    }

    public void setDown(int index) {
        setFlag(index, Link.IFF_UP, false, "set link " + index + " down");
    }

    public void setPromisc(int index, boolean on) {
        setFlag(index, Link.IFF_PROMISC, on, "set link " + index + " promisc " + (on ? "on" : "off"));
    }

    public void setAllmulti(int index, boolean on) {
        setFlag(index, Link.IFF_ALLMULTI, on, "set link " + index + " allmulticast " + (on ? "on" : "off"));
    }

    /** ARP on or off (IFF_NOARP), {@code ip link set X arp on|off}. */
    public void setArp(int index, boolean on) {
        NlMessage m = new NlMessage(Rtm.RTM_SETLINK, 0).u8(0).u8(0).u16(0).u32(index)
                .u32(on ? 0 : Link.IFF_NOARP).u32(Link.IFF_NOARP);
        socket.request(m, "set link " + index + " arp " + (on ? "on" : "off"));
    }

    public void setMtu(int index, int mtu) {
        setlink(index, "set link " + index + " mtu " + mtu).attrU32(Rtm.IFLA_MTU, mtu).send();
    }

    public void setMac(int index, MacAddress mac) {
        setlink(index, "set link " + index + " address " + mac).attr(Rtm.IFLA_ADDRESS, mac.bytes()).send();
    }

    public void setTxqlen(int index, int txqlen) {
        setlink(index, "set link " + index + " txqueuelen " + txqlen).attrU32(Rtm.IFLA_TXQLEN, txqlen).send();
    }

    public void setAlias(int index, String alias) {
        setlink(index, "set link " + index + " alias").attrString(Rtm.IFLA_IFALIAS, alias).send();
    }

    /**
     * Sets the alias and moves the link to device group {@code group} in one request: the kernel
     * applies both under one hold of its rtnl lock, the alias first, so no reader ever sees the
     * link in its new group without the alias.
     */
    public void setAliasAndGroup(int index, String alias, int group) {
        setlink(index, "set link " + index + " alias and group " + Integer.toUnsignedString(group))
                .attrString(Rtm.IFLA_IFALIAS, alias).attrU32(Rtm.IFLA_GROUP, group).send();
    }

    public void rename(int index, String name) {
        setlink(index, "rename link " + index + " to " + name).attrString(Rtm.IFLA_IFNAME, name).send();
    }

    /** Enslaves {@code index} to {@code masterIndex} (e.g. a bridge). */
    public void setMaster(int index, int masterIndex) {
        setlink(index, "set link " + index + " master " + masterIndex).attrU32(Rtm.IFLA_MASTER, masterIndex).send();
    }

    public void setNoMaster(int index) {
        setlink(index, "set link " + index + " nomaster").attrU32(Rtm.IFLA_MASTER, 0).send();
    }

    /** Moves the link into {@code ns}; its index may change there. */
    public void setNamespace(int index, Netns ns) {
        setNamespaceFd(index, ns.fd());
    }

    public void setNamespaceFd(int index, int nsFd) {
        setlink(index, "set link " + index + " netns").attrU32(Rtm.IFLA_NET_NS_FD, nsFd).send();
    }

    /** Bridge-port hairpin mode ({@code bridge link set dev X hairpin on}). */
    public void setHairpin(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_MODE, on, "set bridge port " + index + " hairpin");
    }

    /** Bridge-port isolation ({@code bridge link set dev X isolated on}). */
    public void setIsolated(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_ISOLATED, on, "set bridge port " + index + " isolated");
    }

    public void setLearning(int index, boolean on) {
        setBridgePortFlag(index, Rtm.IFLA_BRPORT_LEARNING, on, "set bridge port " + index + " learning");
    }

    /** @throws ErrnoException ENODEV if {@code index} is not a bridge port */
    public BridgePort bridgePort(int index) {
        for (NlMsg m : socket.dump(ifinfo(Rtm.RTM_GETLINK, Family.AF_BRIDGE, 0, 0), "list bridge ports")) {
            if (m.type() == Rtm.RTM_NEWLINK && m.i32(4) == index) {
                BridgePort p = BridgePort.decode(m);
                if (p.masterIndex() != 0) return p;
            }
        }
        throw new ErrnoException(Errno.ENODEV, "get bridge port " + index, "not a bridge port", null);
    }

    /**
     * {@code bridge vlan add dev X vid V [pvid] [untagged] [self]}: on a bridge port, or with
     * {@code self} on the bridge device itself. The bridge needs VLAN filtering on.
     */
    public void addBridgeVlan(int index, int vid, boolean pvid, boolean untagged, boolean self) {
        socket.request(bridgeVlanRequest(Rtm.RTM_SETLINK, index, vid, pvid, untagged, self), "add bridge vlan " + vid + " dev " + index);
    }

    public void deleteBridgeVlan(int index, int vid, boolean self) {
        socket.request(bridgeVlanRequest(Rtm.RTM_DELLINK, index, vid, false, false, self), "delete bridge vlan " + vid + " dev " + index);
    }

    /** The VLANs of a bridge port (or of the bridge itself); empty when it has none. */
    public List<BridgeVlan> bridgeVlans(int index) {
        NlMessage req = ifinfo(Rtm.RTM_GETLINK, Family.AF_BRIDGE, 0, 0).attrU32(Rtm.IFLA_EXT_MASK, Rtm.RTEXT_FILTER_BRVLAN);
        List<BridgeVlan> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list bridge vlans")) {
            if (m.type() != Rtm.RTM_NEWLINK || m.i32(4) != index) continue;
            for (byte[] v : m.attrs(Rtm.IFINFOMSG_SIZE).nested(Rtm.IFLA_AF_SPEC).bytesAll(Rtm.IFLA_BRIDGE_VLAN_INFO)) {
                ByteBuffer b = ByteBuffer.wrap(v).order(ByteOrder.nativeOrder());
                int flags = Short.toUnsignedInt(b.getShort(0));
                out.add(new BridgeVlan(Short.toUnsignedInt(b.getShort(2)), (flags & Rtm.BRIDGE_VLAN_INFO_PVID) != 0,
                        (flags & Rtm.BRIDGE_VLAN_INFO_UNTAGGED) != 0));
            }
        }
        return out;
    }

    static NlMessage bridgeVlanRequest(int type, int index, int vid, boolean pvid, boolean untagged, boolean self) {
        if (vid < 1 || vid > 4094) throw new IllegalArgumentException("bad VLAN id " + vid);
        NlMessage m = ifinfo(type, Family.AF_BRIDGE, index, 0);
        int spec = m.nest(Rtm.IFLA_AF_SPEC);
        if (self) m.attrU16(Rtm.IFLA_BRIDGE_FLAGS, Rtm.BRIDGE_FLAGS_SELF);
        int flags = (pvid ? Rtm.BRIDGE_VLAN_INFO_PVID : 0) | (untagged ? Rtm.BRIDGE_VLAN_INFO_UNTAGGED : 0);
        ByteBuffer info = ByteBuffer.allocate(4).order(ByteOrder.nativeOrder());
        info.putShort((short) flags).putShort((short) vid);
        m.attr(Rtm.IFLA_BRIDGE_VLAN_INFO, info.array());
        return m.end(spec);
    }

    private void setFlag(int index, int flag, boolean on, String op) {
        NlMessage m = new NlMessage(Rtm.RTM_SETLINK, 0).u8(0).u8(0).u16(0).u32(index).u32(on ? flag : 0).u32(flag);
        socket.request(m, op);
    }

    private void setBridgePortFlag(int index, int attr, boolean on, String op) {
        NlMessage m = ifinfo(Rtm.RTM_SETLINK, Family.AF_BRIDGE, index, 0);
        int nest = m.nest(Rtm.IFLA_PROTINFO | NlMessage.NLA_F_NESTED);
        m.attrU8(attr, on ? 1 : 0);
        m.end(nest);
        socket.request(m, op + (on ? " on" : " off"));
    }

    /** An ifinfomsg request with flags 0 and change mask {@code change}. */
    private static NlMessage ifinfo(int type, int family, int index, int change) {
        return new NlMessage(type, 0).u8(family).u8(0).u16(0).u32(index).u32(0).u32(change);
    }

    private SetLink setlink(int index, String op) {
        return new SetLink(ifinfo(Rtm.RTM_SETLINK, 0, index, 0), op);
    }

    private final class SetLink {
        private final NlMessage m;
        private final String op;

        SetLink(NlMessage m, String op) {
            this.m = m;
            this.op = op;
        }

        SetLink attrU32(int type, int v) {
            m.attrU32(type, v);
            return this;
        }

        SetLink attr(int type, byte[] v) {
            m.attr(type, v);
            return this;
        }

        SetLink attrString(int type, String v) {
            m.attrString(type, v);
            return this;
        }

        void send() {
            socket.request(m, op);
        }
    }

    private static Link single(List<NlMsg> replies, String op) {
        for (NlMsg m : replies) if (m.type() == Rtm.RTM_NEWLINK) return Link.decode(m);
        throw new ErrnoException(Errno.ENODEV, op, "no link in the reply", null);
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
        NlMessage m = new NlMessage(Rtm.RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
        encodeAddress(m, index, address, prefixLength, nodad ? Address.IFA_F_NODAD : 0);
        socket.request(m, "add address " + address + "/" + prefixLength + " dev " + index);
    }

    public void addAddress(int index, Cidr prefix) {
        addAddress(index, prefix.address(), prefix.prefix(), false);
    }

    /** @throws ErrnoException EADDRNOTAVAIL if the link has no such address */
    public void deleteAddress(int index, IpAddr address, int prefixLength) {
        NlMessage m = new NlMessage(Rtm.RTM_DELADDR, 0);
        encodeAddress(m, index, address, prefixLength, 0);
        socket.request(m, "delete address " + address + "/" + prefixLength + " dev " + index);
    }

    /** Addresses of one link ({@code index} 0: of all links) in {@code family}. */
    public List<Address> addresses(int index, Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETADDR, 0).u8(family.af()).u8(0).u8(0).u8(0).u32(0);
        List<Address> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list addresses")) {
            if (m.type() != Rtm.RTM_NEWADDR) continue;
            Address a = Address.decode(m);
            if ((index == 0 || a.index() == index) && a.address() != null) out.add(a);
        }
        return out;
    }

    /**
     * Waits until no IPv6 address of the link is tentative any more (duplicate address detection
     * finished), as the reference IPAM code does before using a new address.
     *
     * @throws ErrnoException ETIMEDOUT when addresses are still tentative after {@code timeoutMillis};
     *     EADDRNOTAVAIL when DAD failed for one
     */
    public void settleAddresses(int index, long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            boolean tentative = false;
            for (Address a : addresses(index, Family.INET6)) {
                if ((a.flags() & Address.IFA_F_DADFAILED) != 0) {
                    throw new ErrnoException(Errno.EADDRNOTAVAIL, "settle addresses dev " + index,
                            "duplicate address detection failed for " + a.prefix(), null);
                }
                tentative |= (a.flags() & Address.IFA_F_TENTATIVE) != 0;
            }
            if (!tentative) return;
            if (System.nanoTime() - deadline > 0) {
                throw new ErrnoException(Errno.ETIMEDOUT, "settle addresses dev " + index,
                        "still tentative after " + timeoutMillis + " ms", null);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ErrnoException(Errno.EINTR, "settle addresses dev " + index, null, e);
            }
        }
    }

    private static void encodeAddress(NlMessage m, int index, IpAddr address, int prefixLength, int flags) {
        Family family = Family.of(address);
        m.u8(family.af()).u8(prefixLength).u8(flags & 0xff).u8(0).u32(index);
        m.attrAddress(Rtm.IFA_LOCAL, address);
        m.attrAddress(Rtm.IFA_ADDRESS, address);
        if (flags != 0) m.attrU32(Rtm.IFA_FLAGS, flags);
        if (!address.isV6() && prefixLength < 31) {
            m.attrAddress(Rtm.IFA_BROADCAST, broadcast(address, prefixLength));
        }
    }

    /** The IPv4 broadcast address of {@code v4}'s subnet: its host bits set. */
    static IpAddr broadcast(IpAddr v4, int prefixLength) {
        return new Cidr(v4, prefixLength).last();
    }

    // ---------------------------------------------------------------- routes

    /** @throws ErrnoException EEXIST if an equal route exists */
    public void addRoute(Route route) {
        routeRequest(Rtm.RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, route, false, "add route ");
    }

    /** Adds or overwrites ({@code ip route replace}). */
    public void replaceRoute(Route route) {
        routeRequest(Rtm.RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, route, false, "replace route ");
    }

    /** @throws ErrnoException ESRCH if no route matches */
    public void deleteRoute(Route route) {
        routeRequest(Rtm.RTM_DELROUTE, 0, route, true, "delete route ");
    }

    /** Routes of {@code family} in every table, without cached clones. */
    public List<Route> routes(Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETROUTE, 0).u8(family.af()).zeros(11);
        List<Route> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list routes")) {
            if (m.type() != Rtm.RTM_NEWROUTE || (m.i32(8) & Rtm.RTM_F_CLONED) != 0) continue;
            out.add(Route.decode(m));
        }
        return out;
    }

    public List<Route> routes(Family family, int table) {
        return routes(family).stream().filter(r -> r.table() == table).toList();
    }

    private void routeRequest(int type, int flags, Route route, boolean delete, String verb) {
        NlMessage m = new NlMessage(type, flags);
        route.encode(m, delete);
        socket.request(m, verb + describe(route));
    }

    private static String describe(Route r) {
        StringBuilder s = new StringBuilder(r.isDefault() ? "default" : r.dst().toString());
        if (r.gateway() != null) s.append(" via ").append(r.gateway());
        if (r.oif() > 0) s.append(" dev ").append(r.oif());
        if (r.table() >= 0) s.append(" table ").append(r.table());
        if (r.nhid() != 0) s.append(" nhid ").append(Integer.toUnsignedString(r.nhid()));
        return s.toString();
    }

    // ---------------------------------------------------------------- nexthop objects

    /**
     * {@code ip nexthop add}. @throws ErrnoException EEXIST if the id is taken; on a kernel without
     *     nexthop objects (before 5.3) EOPNOTSUPP or EINVAL
     */
    public void addNexthop(Nexthop nh) {
        socket.request(nexthopRequest(nh, false), "add nexthop " + describe(nh));
    }

    /** {@code ip nexthop replace}: creates it or changes it in place; routes through it follow at once. */
    public void replaceNexthop(Nexthop nh) {
        socket.request(nexthopRequest(nh, true), "replace nexthop " + describe(nh));
    }

    /** {@code ip nexthop del id N}: the routes through it go with it. @throws ErrnoException ENOENT if there is none */
    public void deleteNexthop(int id) {
        socket.request(nexthopIdRequest(Rtm.RTM_DELNEXTHOP, id), "delete nexthop id " + Integer.toUnsignedString(id));
    }

    /** {@code ip nexthop get id N}; empty when there is none. */
    public Optional<Nexthop> nexthop(int id) {
        String op = "get nexthop id " + Integer.toUnsignedString(id);
        try {
            for (NlMsg m : socket.request(nexthopIdRequest(Rtm.RTM_GETNEXTHOP, id), op)) {
                if (m.type() == Rtm.RTM_NEWNEXTHOP) return Optional.of(Nexthop.decode(m));
            }
            return Optional.empty();
        } catch (ErrnoException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    /** Every nexthop object of the namespace ({@code ip nexthop show}). */
    public List<Nexthop> nexthops() {
        NlMessage req = new NlMessage(Rtm.RTM_GETNEXTHOP, 0).zeros(Rtm.NHMSG_SIZE);
        List<Nexthop> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list nexthops")) {
            if (m.type() == Rtm.RTM_NEWNEXTHOP) out.add(Nexthop.decode(m));
        }
        return out;
    }

    /**
     * Changes sent several to a datagram ({@link NetlinkSocket#requestEach}): one system call pair
     * per 64 instead of per change, for an agent programming thousands of routes. Each applies or
     * fails on its own, in order; {@link #apply} returns each one's outcome.
     */
    public static final class Changes {
        private final List<NlMessage> messages = new ArrayList<>();
        private final List<String> operations = new ArrayList<>();

        public Changes addNexthop(Nexthop nh) {
            return add(nexthopRequest(nh, false), "add nexthop " + describe(nh));
        }

        public Changes replaceNexthop(Nexthop nh) {
            return add(nexthopRequest(nh, true), "replace nexthop " + describe(nh));
        }

        public Changes deleteNexthop(int id) {
            return add(nexthopIdRequest(Rtm.RTM_DELNEXTHOP, id), "delete nexthop id " + Integer.toUnsignedString(id));
        }

        public Changes addRoute(Route r) {
            return add(newRouteRequest(r, false), "add route " + describe(r));
        }

        public Changes replaceRoute(Route r) {
            return add(newRouteRequest(r, true), "replace route " + describe(r));
        }

        public Changes deleteRoute(Route r) {
            NlMessage m = new NlMessage(Rtm.RTM_DELROUTE, 0);
            r.encode(m, true);
            return add(m, "delete route " + describe(r));
        }

        public Changes replaceNeighbor(Neighbor n) {
            NlMessage m = new NlMessage(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
            n.encode(m);
            return add(m, "replace neighbor " + describe(n));
        }

        public Changes deleteNeighbor(Neighbor n) {
            NlMessage m = new NlMessage(Rtm.RTM_DELNEIGH, 0);
            n.encode(m);
            return add(m, "delete neighbor " + describe(n));
        }

        public int size() {
            return messages.size();
        }

        private Changes add(NlMessage m, String operation) {
            messages.add(m);
            operations.add(operation);
            return this;
        }
    }

    /** Sends {@code changes}; per change, in order, null (done) or its error. */
    public List<ErrnoException> apply(Changes changes) {
        if (changes.messages.isEmpty()) return List.of();
        return socket.requestEach(changes.messages, changes.operations);
    }

    /** The RTM_NEWNEXTHOP request, before the socket adds REQUEST|ACK, seq and port id. */
    static NlMessage nexthopRequest(Nexthop nh, boolean replace) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWNEXTHOP, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL));
        nh.encode(m);
        return m;
    }

    static NlMessage nexthopIdRequest(int type, int id) {
        NlMessage m = new NlMessage(type, 0);
        Nexthop.encodeId(m, id);
        return m;
    }

    /** The RTM_NEWROUTE request of {@link #addRoute} ({@code replace} false) or {@link #replaceRoute}. */
    static NlMessage newRouteRequest(Route route, boolean replace) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWROUTE, NLM_F_CREATE | (replace ? NLM_F_REPLACE : NLM_F_EXCL));
        route.encode(m, false);
        return m;
    }

    private static String describe(Nexthop nh) {
        StringBuilder s = new StringBuilder("id ").append(Integer.toUnsignedString(nh.id()));
        if (nh.gateway() != null) s.append(" via ").append(nh.gateway());
        if (nh.oif() > 0) s.append(" dev ").append(nh.oif());
        return s.toString();
    }

    // ---------------------------------------------------------------- neighbours and FDB

    /** @throws ErrnoException EEXIST if an entry for the address exists */
    public void addNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, n, "add neighbor ");
    }

    public void replaceNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, n, "replace neighbor ");
    }

    public void deleteNeighbor(Neighbor n) {
        neighborRequest(Rtm.RTM_DELNEIGH, 0, n, "delete neighbor ");
    }

    /** ARP/NDP entries of one link ({@code index} 0: all) in {@code family}. */
    public List<Neighbor> neighbors(int index, Family family) {
        return neighborDump(index, family.af(), "list neighbors");
    }

    /** {@code bridge fdb add}; for VXLAN use {@link Neighbor#fdb}. */
    public void addFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_EXCL, requireFdb(entry), "add fdb ");
    }

    /** {@code bridge fdb append}: another remote for the same MAC, e.g. all-zero flood entries. */
    public void appendFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND, requireFdb(entry), "append fdb ");
    }

    public void deleteFdb(Neighbor entry) {
        neighborRequest(Rtm.RTM_DELNEIGH, 0, requireFdb(entry), "delete fdb ");
    }

    /** FDB entries of one link ({@code index} 0: all). */
    public List<Neighbor> fdb(int index) {
        return neighborDump(index, Family.AF_BRIDGE, "list fdb");
    }

    private static Neighbor requireFdb(Neighbor n) {
        if (!n.isFdb()) throw new IllegalArgumentException("not an FDB entry (family AF_BRIDGE): " + n);
        return n;
    }

    private void neighborRequest(int type, int flags, Neighbor n, String verb) {
        NlMessage m = new NlMessage(type, flags);
        n.encode(m);
        socket.request(m, verb + describe(n));
    }

    private static String describe(Neighbor n) {
        String what = (n.address() != null ? n.address().toString() : "") + (n.mac() != null ? " lladdr " + n.mac() : "");
        return what.trim() + " dev " + n.index();
    }

    private List<Neighbor> neighborDump(int index, int af, String op) {
        NlMessage req = new NlMessage(Rtm.RTM_GETNEIGH, 0).u8(af).u8(0).u16(0).u32(0).u16(0).u8(0).u8(0);
        List<Neighbor> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, op)) {
            if (m.type() != Rtm.RTM_NEWNEIGH) continue;
            Neighbor n = Neighbor.decode(m);
            if (index == 0 || n.index() == index) out.add(n);
        }
        return out;
    }

    // ---------------------------------------------------------------- rules

    /** @throws ErrnoException EEXIST if an identical rule exists */
    public void addRule(Rule rule) {
        NlMessage m = new NlMessage(Rtm.RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL);
        rule.encode(m);
        socket.request(m, "add rule " + describe(rule));
    }

    /** @throws ErrnoException ENOENT if no rule matches */
    public void deleteRule(Rule rule) {
        NlMessage m = new NlMessage(Rtm.RTM_DELRULE, 0);
        rule.encode(m);
        socket.request(m, "delete rule " + describe(rule));
    }

    public List<Rule> rules(Family family) {
        NlMessage req = new NlMessage(Rtm.RTM_GETRULE, 0).u8(family.af()).zeros(11);
        List<Rule> out = new ArrayList<>();
        for (NlMsg m : socket.dump(req, "list rules")) {
            if (m.type() == Rtm.RTM_NEWRULE) out.add(Rule.decode(m));
        }
        return out;
    }

    private static String describe(Rule r) {
        StringBuilder s = new StringBuilder();
        if (r.priority() >= 0) s.append("pref ").append(r.priority()).append(' ');
        s.append("from ").append(r.src() == null ? "all" : r.src().toString());
        if (r.dst() != null) s.append(" to ").append(r.dst());
        if (r.table() >= 0) s.append(" table ").append(r.table());
        return s.toString();
    }
}
