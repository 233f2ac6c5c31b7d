package io.jcni.types;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A CNI result in its richest form (1.1.0). Results of every older version decode into this model
 * and encode back out of it, so conversion between any two versions is decode-then-encode; what an
 * older version cannot carry is dropped on the way out, following libcni's converters.
 *
 * @param cniVersion the version the result was produced in or is to be printed in
 */
public record Result(String cniVersion, List<Interface> interfaces, List<IpConfig> ips, List<Route> routes, Dns dns)
        implements Json.JsonWritable {

    public Result {
        interfaces = interfaces == null ? List.of() : List.copyOf(interfaces);
        ips = ips == null ? List.of() : List.copyOf(ips);
        routes = routes == null ? List.of() : List.copyOf(routes);
        dns = dns == null ? Dns.EMPTY : dns;
    }

    /** An interface created or touched by a plugin. Null fields are omitted on the wire. */
    public record Interface(String name, String mac, Integer mtu, String sandbox, String socketPath, String pciID) {
        public Interface(String name, String mac, String sandbox) {
            this(name, mac, null, sandbox, null, null);
        }
    }

    /**
     * An address assigned to an interface, parsed once where the result is decoded (as cni's
     * types100.IPConfig holds a net.IPNet and a net.IP), so plugins never parse it again.
     *
     * @param address the address with its prefix length, host bits kept, e.g. 10.1.0.5/16
     * @param gateway null when the result names none
     * @param interfaceIndex index into {@link Result#interfaces()}, or null when not tied to one
     */
    public record IpConfig(Cidr address, IpAddr gateway, Integer interfaceIndex) {
        public IpConfig {
            Objects.requireNonNull(address, "address");
        }

        public boolean isIpv6() {
            return address.isV6();
        }

        /** The address without its prefix length. */
        public IpAddr ip() {
            return address.address();
        }
    }

    /**
     * A route; the fields after {@code gw} exist from 1.1.0 (mtu, advmss, priority, table, scope).
     *
     * @param dst the destination as written, host bits kept (Go's types.Route keeps them too)
     * @param gw null when the route names no gateway
     */
    public record Route(Cidr dst, IpAddr gw, Integer mtu, Integer advmss, Integer priority, Integer table, Integer scope) {
        public Route {
            Objects.requireNonNull(dst, "dst");
        }

        public Route(Cidr dst, IpAddr gw) {
            this(dst, gw, null, null, null, null, null);
        }

        public boolean isIpv6() {
            return dst.isV6();
        }

        /** The route as 0.x results carry it: destination and gateway only. */
        public Route basic() {
            return new Route(dst, gw);
        }
    }

    /** DNS settings; every field optional. */
    public record Dns(List<String> nameservers, String domain, List<String> search, List<String> options) {
        public static final Dns EMPTY = new Dns(List.of(), null, List.of(), List.of());

        public Dns {
            nameservers = nameservers == null ? List.of() : List.copyOf(nameservers);
            search = search == null ? List.of() : List.copyOf(search);
            options = options == null ? List.of() : List.copyOf(options);
        }

        public boolean isEmpty() {
            return nameservers.isEmpty() && domain == null && search.isEmpty() && options.isEmpty();
        }
    }

    /** The same result, to be printed in another version. */
    public Result withVersion(String version) {
        return new Result(version, interfaces, ips, routes, dns);
    }

    /** A builder-style copy that adds an interface and returns its index. */
    public Result withInterfaces(List<Interface> newInterfaces) {
        return new Result(cniVersion, newInterfaces, ips, routes, dns);
    }

    public Result withIps(List<IpConfig> newIps) {
        return new Result(cniVersion, interfaces, newIps, routes, dns);
    }

    public Result withRoutes(List<Route> newRoutes) {
        return new Result(cniVersion, interfaces, ips, newRoutes, dns);
    }

    public Result withDns(Dns newDns) {
        return new Result(cniVersion, interfaces, ips, routes, newDns);
    }

    /** Encodes in {@link #cniVersion()}'s wire format. */
    @Override
    public Map<String, Object> toJson() {
        return ResultCodec.encode(this, CniVersion.parse(cniVersion));
    }

    /** Decodes a result of any version into this model; {@code cniVersion} keeps the input's version. */
    public static Result fromJson(Map<String, Object> json) {
        return ResultCodec.decode(json);
    }

    /** Converts a result JSON of any version to another version's JSON. */
    public static Map<String, Object> convert(Map<String, Object> json, String toVersion) {
        CniVersion to = CniVersion.parseSupported(toVersion);
        return ResultCodec.encode(ResultCodec.decode(json).withVersion(to.toString()), to);
    }

    static Map<String, Object> dnsJson(Dns dns) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (!dns.nameservers().isEmpty()) m.put("nameservers", new ArrayList<Object>(dns.nameservers()));
        if (dns.domain() != null && !dns.domain().isEmpty()) m.put("domain", dns.domain());
        if (!dns.search().isEmpty()) m.put("search", new ArrayList<Object>(dns.search()));
        if (!dns.options().isEmpty()) m.put("options", new ArrayList<Object>(dns.options()));
        return m;
    }
}
