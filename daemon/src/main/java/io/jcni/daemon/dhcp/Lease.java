package io.jcni.daemon.dhcp;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.StateDoc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A lease jcnid keeps for one attachment: who asked (the attachment and the client identity),
 * what the server granted (its ACK's address and options) and when it must be renewed. Persisted as
 * JSON by {@link LeaseStore} so a restarted jcnid goes on renewing it.
 *
 * @param netns the container's network namespace path, entered for every exchange
 * @param server the server identifier (option 54) of the server that granted the lease
 * @param ack the options of the last ACK
 */
public record Lease(String containerId, String network, String ifname, String netns, ClientIdentity identity,
                    IpAddr address, IpAddr server, Map<Integer, byte[]> ack, LeaseTimes times) {

    public String clientId() {
        return identity.clientId();
    }

    /** The lease from an ACK; {@link DhcpException} (BAD_ACK) when it lacks what a result needs. */
    public static Lease fromAck(String containerId, String network, String ifname, String netns, ClientIdentity identity,
                                DhcpMessage ack, IpAddr previousServer, long now) throws DhcpException {
        if (DhcpOptions.prefixLength(ack.option(DhcpOptions.SUBNET_MASK)) < 0) {
            throw new DhcpException(DhcpException.Kind.BAD_ACK, "DHCP option Subnet Mask not found in DHCPACK");
        }
        IpAddr server = DhcpOptions.firstAddress(ack.option(DhcpOptions.SERVER_ID));
        if (server == null) server = previousServer;
        if (server == null) throw new DhcpException(DhcpException.Kind.BAD_ACK, "the DHCPACK has no server identifier (option 54)");
        return new Lease(containerId, network, ifname, netns, identity, new IpAddr(ack.yiaddr()), server, ack.options(),
                LeaseTimes.fromAck(ack, now));
    }

    public Cidr cidr() {
        return new Cidr(address, DhcpOptions.prefixLength(ack.get(DhcpOptions.SUBNET_MASK)));
    }

    /** The first router of option 3, as the reference takes its gateway. */
    public IpAddr gateway() {
        return DhcpOptions.firstAddress(ack.get(DhcpOptions.ROUTER));
    }

    /**
     * The routes for the result, as the reference builds them: option 121 alone when present (RFC
     * 3442 says a client then ignores options 3 and 33 for routing); else option 33 and a default
     * route through the gateway.
     */
    public List<DhcpOptions.Route> routes() {
        List<DhcpOptions.Route> classless = DhcpOptions.classlessRoutes(ack.get(DhcpOptions.CLASSLESS_ROUTES));
        if (!classless.isEmpty()) return classless;
        List<DhcpOptions.Route> out = new ArrayList<>(DhcpOptions.staticRoutes(ack.get(DhcpOptions.STATIC_ROUTES)));
        IpAddr gw = gateway();
        if (gw != null) out.add(new DhcpOptions.Route(Cidr.any(false), gw));
        return out;
    }

    public List<IpAddr> nameservers() {
        return DhcpOptions.addresses(ack.get(DhcpOptions.DNS_SERVERS));
    }

    public String domain() {
        return DhcpOptions.text(ack.get(DhcpOptions.DOMAIN_NAME));
    }

    /** The lease as a renewing or rebinding ACK extends it (the server id stays when the ACK omits it). */
    public Lease withAck(DhcpMessage newAck, long now) throws DhcpException {
        return fromAck(containerId, network, ifname, netns, identity, newAck, server, now);
    }

    /**
     * Whether {@code other} records the same grant for the same attachment: all but the times
     * (options 51, 58 and 59 included: some servers send the time left, which changes each time).
     */
    public boolean sameGrant(Lease other) {
        if (!containerId.equals(other.containerId) || !network.equals(other.network) || !ifname.equals(other.ifname)
                || !netns.equals(other.netns) || !address.equals(other.address) || !server.equals(other.server)
                || !identity.clientId().equals(other.identity.clientId())) {
            return false;
        }
        Set<Integer> codes = new HashSet<>(ack.keySet());
        codes.addAll(other.ack.keySet());
        codes.removeAll(TIME_OPTIONS);
        for (int code : codes) {
            if (!Arrays.equals(ack.get(code), other.ack.get(code))) return false;
        }
        return true;
    }

    private static final Set<Integer> TIME_OPTIONS = Set.of(DhcpOptions.LEASE_TIME, DhcpOptions.RENEWAL_TIME, DhcpOptions.REBINDING_TIME);

    /** What the plugin needs for its result, as JSON. */
    public Map<String, Object> resultJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("address", cidr().toString());
        IpAddr gw = gateway();
        if (gw != null) m.put("gateway", gw.toString());
        List<Object> routes = new ArrayList<>();
        for (DhcpOptions.Route r : routes()) {
            Map<String, Object> rt = new LinkedHashMap<>();
            rt.put("dst", r.dst().toString());
            if (!r.gw().equals(new IpAddr(DhcpMessage.ZERO))) rt.put("gw", r.gw().toString());
            routes.add(rt);
        }
        m.put("routes", routes);
        m.put("nameservers", nameservers().stream().map(IpAddr::toString).toList());
        if (domain() != null) m.put("domain", domain());
        m.put("server", server.toString());
        m.put("expires", times.expiresAt());
        return m;
    }

    // ---- persistence ----

    public Map<String, Object> toJson() {
        HexFormat hex = HexFormat.of();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", 1L);
        m.put("containerId", containerId);
        m.put("network", network);
        m.put("ifname", ifname);
        m.put("netns", netns);
        m.put("clientId", identity.clientId());
        m.put("mac", hex.formatHex(identity.mac()));
        m.put("request", identity.requested().stream().map(Integer::longValue).map(Object.class::cast).toList());
        m.put("provide", hexMap(identity.provided()));
        m.put("address", address.toString());
        m.put("server", server.toString());
        m.put("ack", hexMap(ack));
        m.put("boundAt", times.boundAt());
        m.put("renewAt", times.renewAt());
        m.put("rebindAt", times.rebindAt());
        m.put("expiresAt", times.expiresAt());
        return m;
    }

    /** The lease {@link #toJson} wrote. @throws DamagedStateException naming the file and the field when it is damaged */
    public static Lease fromJson(StateDoc d) {
        List<Integer> req = new ArrayList<>();
        for (long code : d.integers("request", 0, 255)) req.add((int) code);
        ClientIdentity id = new ClientIdentity(d.string("clientId"), hex(d, "mac"), List.copyOf(req), unhexMap(d.object("provide")));
        LeaseTimes t = new LeaseTimes(time(d, "boundAt"), time(d, "renewAt"), time(d, "rebindAt"), time(d, "expiresAt"));
        return new Lease(d.string("containerId"), d.string("network"), d.string("ifname"), d.optString("netns"), id,
                address(d, "address"), address(d, "server"), unhexMap(d.object("ack")), t);
    }

    private static long time(StateDoc d, String key) {
        return d.integer(key, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    private static IpAddr address(StateDoc d, String key) {
        String s = d.string(key);
        IpAddr a = IpAddr.tryParse(s);
        if (a == null) throw d.damaged(key, "not an IP address: " + s);
        return a;
    }

    private static byte[] hex(StateDoc d, String key) {
        String s = d.string(key);
        try {
            return HexFormat.of().parseHex(s);
        } catch (IllegalArgumentException e) {
            throw d.damaged(key, "not hexadecimal: " + s);
        }
    }

    private static Map<String, Object> hexMap(Map<Integer, byte[]> opts) {
        Map<String, Object> out = new LinkedHashMap<>();
        opts.forEach((k, v) -> out.put(Integer.toString(k), HexFormat.of().formatHex(v)));
        return out;
    }

    /** Options by code, as {@link #hexMap} wrote them. */
    private static Map<Integer, byte[]> unhexMap(StateDoc d) {
        Map<Integer, byte[]> out = new LinkedHashMap<>();
        for (String k : d.keys()) {
            int code;
            try {
                code = Integer.parseInt(k);
            } catch (NumberFormatException e) {
                throw d.damaged(k, "not an option code");
            }
            if (code < 0 || code > 255) throw d.damaged(k, "not an option code");
            out.put(code, hex(d, k));
        }
        return out;
    }
}
