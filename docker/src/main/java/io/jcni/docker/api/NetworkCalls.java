package io.jcni.docker.api;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The NetworkDriver calls of libnetwork's remote API (drivers/remote/api), decoded and checked.
 * Field names on the wire are Go's exported names (NetworkID, IPv4Data, ...).
 */
public final class NetworkCalls {
    private NetworkCalls() {}

    /** One entry of IPv4Data/IPv6Data: the pool the IPAM driver gave and the gateway in it. */
    public record IpamData(String addressSpace, Cidr pool, Cidr gateway, Map<String, String> auxAddresses) {
        static IpamData parse(Body b, boolean v6) {
            Cidr pool = cidr(b, "Pool", v6);
            if (pool == null) throw b.bad("Pool", "missing");
            Cidr gw = cidr(b, "Gateway", v6);
            if (gw != null && !pool.contains(gw.address())) {
                throw b.bad("Gateway", gw.address() + " is outside the pool " + pool);
            }
            return new IpamData(b.string("AddressSpace"), pool, gw, b.stringMap("AuxAddresses"));
        }
    }

    public record CreateNetwork(String networkId, Map<String, Object> options, List<IpamData> ipv4, List<IpamData> ipv6) {
        public static CreateNetwork parse(Body b) {
            return new CreateNetwork(b.id("NetworkID"), b.object("Options").fields(), ipam(b, "IPv4Data", false),
                    ipam(b, "IPv6Data", true));
        }
    }

    /** AllocateNetwork is for swarm-scoped (global) drivers; its Options are strings. */
    public record AllocateNetwork(String networkId, Map<String, String> options, List<IpamData> ipv4, List<IpamData> ipv6) {
        public static AllocateNetwork parse(Body b) {
            return new AllocateNetwork(b.id("NetworkID"), b.stringMap("Options"), ipam(b, "IPv4Data", false), ipam(b, "IPv6Data", true));
        }
    }

    /** DeleteNetwork and FreeNetwork. */
    public record NetworkRef(String networkId) {
        public static NetworkRef parse(Body b) {
            return new NetworkRef(b.id("NetworkID"));
        }
    }

    /** The addresses Docker's IPAM gave an endpoint (each may be null). */
    public record EndpointInterface(Cidr address, Cidr addressV6, String macAddress) {
        static EndpointInterface parse(Body b) {
            String mac = b.string("MacAddress");
            if (!mac.isEmpty() && !mac.matches("(?i)[0-9a-f]{2}(:[0-9a-f]{2}){5}")) throw b.bad("MacAddress", "not a MAC address: " + mac);
            return new EndpointInterface(cidr(b, "Address", false), cidr(b, "AddressIPv6", true), mac);
        }
    }

    public record CreateEndpoint(String networkId, String endpointId, EndpointInterface iface, Map<String, Object> options) {
        public static CreateEndpoint parse(Body b) {
            EndpointInterface i = b.has("Interface") ? EndpointInterface.parse(b.object("Interface")) : new EndpointInterface(null, null, "");
            return new CreateEndpoint(b.id("NetworkID"), b.id("EndpointID"), i, b.object("Options").fields());
        }
    }

    /** DeleteEndpoint, EndpointOperInfo, Leave and RevokeExternalConnectivity. */
    public record EndpointRef(String networkId, String endpointId) {
        public static EndpointRef parse(Body b) {
            return new EndpointRef(b.id("NetworkID"), b.id("EndpointID"));
        }
    }

    public record Join(String networkId, String endpointId, String sandboxKey, Map<String, Object> options) {
        public static Join parse(Body b) {
            String key = b.requiredString("SandboxKey");
            if (!key.startsWith("/") || key.contains("/../") || key.endsWith("/..") || key.indexOf('\0') >= 0) {
                throw b.bad("SandboxKey", "not an absolute path to a network namespace: " + key);
            }
            return new Join(b.id("NetworkID"), b.id("EndpointID"), key, b.object("Options").fields());
        }
    }

    /** A published port, as libnetwork's types.PortBinding encodes it (Proto is the IP protocol number). */
    public record PortBinding(String protocol, int containerPort, String hostIp, int hostPort, int hostPortEnd, Map<String, Object> raw) {
        static PortBinding parse(Body b) {
            long proto = b.integer("Proto", 0, 255, 6);
            String p = switch ((int) proto) {
                case 6 -> "tcp";
                case 17 -> "udp";
                case 132 -> "sctp";
                default -> throw b.bad("Proto", "IP protocol " + proto + " cannot be published (tcp 6, udp 17, sctp 132)");
            };
            int port = (int) b.integer("Port", 1, 65535, 0);
            if (port == 0) throw b.bad("Port", "missing");
            String hostIp = b.string("HostIP");
            if (!hostIp.isEmpty() && IpAddr.tryParse(hostIp) == null) throw b.bad("HostIP", "not an IP address: " + hostIp);
            int hostPort = (int) b.integer("HostPort", 0, 65535, 0);
            int end = (int) b.integer("HostPortEnd", 0, 65535, 0);
            return new PortBinding(p, port, hostIp, hostPort, end, b.fields());
        }

        /** A binding as an endpoint's state keeps it (libnetwork's own encoding, checked again). */
        public static PortBinding fromRaw(Map<String, Object> raw) {
            return parse(new Body("published port", raw));
        }
    }

    public record ProgramExternalConnectivity(String networkId, String endpointId, List<PortBinding> ports) {
        public static ProgramExternalConnectivity parse(Body b) {
            List<PortBinding> ports = new ArrayList<>();
            for (Body p : b.object("Options").objects("com.docker.network.portmap")) ports.add(PortBinding.parse(p));
            return new ProgramExternalConnectivity(b.id("NetworkID"), b.id("EndpointID"), ports);
        }
    }

    /** DiscoverNew and DiscoverDelete: node and datastore notifications (a local driver has no use for them). */
    public record Discovery(long type, Object data) {
        public static Discovery parse(Body b) {
            return new Discovery(b.integer("DiscoveryType", 0, Integer.MAX_VALUE, 0), b.fields().get("DiscoveryData"));
        }
    }

    /**
     * What Join answers (see the module README).
     *
     * @param srcName the interface libnetwork moves into the sandbox and renames to eth&lt;N&gt;
     */
    public record JoinAnswer(String srcName, IpAddr gateway, IpAddr gatewayV6, boolean disableGatewayService) {}

    private static List<IpamData> ipam(Body b, String key, boolean v6) {
        List<IpamData> out = new ArrayList<>();
        for (Body d : b.objects(key)) out.add(IpamData.parse(d, v6));
        return out;
    }

    /** A CIDR ("10.0.0.2/24") of the given family; absent or "" reads as null. */
    static Cidr cidr(Body b, String key, boolean v6) {
        String s = b.string(key);
        if (s.isEmpty()) return null;
        Cidr c = Cidr.tryParse(s);
        if (c == null) throw b.bad(key, "not an address with a prefix length: " + s);
        if (c.isV6() != v6) throw b.bad(key, "expected an IPv" + (v6 ? 6 : 4) + " address: " + s);
        return c;
    }
}
