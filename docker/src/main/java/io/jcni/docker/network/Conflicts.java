package io.jcni.docker.network;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.NetworkCalls.PortBinding;
import io.jcni.docker.network.Attacher.HostLink;
import io.jcni.docker.network.Attacher.HostRoute;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a new network or a published port must not collide with (pure: the host's links and routes
 * are handed in). The messages are Docker's own where Docker has one, so that a user who knows
 * Docker's bridge driver recognises them.
 */
final class Conflicts {
    private Conflicts() {}

    /** Docker's IPAM wording for a pool that overlaps another (libnetwork's ErrPoolOverlap). */
    static final String POOL_OVERLAP = "Pool overlaps with other one on this address space";

    /**
     * Refuses a network whose bridge name another network of the driver uses (a conflist's bridge
     * may be shared by networks made from conflists), or whose bridge name is taken by a host
     * interface that is not a bridge (libnetwork's bridge driver says the same).
     */
    static void checkBridge(DockerNetwork n, Collection<DockerNetwork> others, Optional<HostLink> existing) {
        String bridge = n.linuxBridge();
        if (bridge == null) return;
        for (DockerNetwork o : others) {
            if (o.id().equals(n.id()) || !bridge.equals(o.linuxBridge())) continue;
            if (n.conflist() != null && o.conflist() != null) continue;
            throw new DriverException("CreateNetwork: cannot create network " + n.id() + " (" + bridge + "): conflicts with network "
                    + o.id() + " (" + bridge + "): networks have same bridge name");
        }
        if (existing.isPresent() && !"bridge".equals(existing.get().kind())) {
            throw new DriverException("CreateNetwork: existing interface " + bridge + " is not a bridge (" + DockerNetwork.OPT_BRIDGE
                    + " names the Linux bridge the network uses; jcni never takes over another kind of interface)");
        }
    }

    /**
     * Refuses a network whose subnets overlap another network of the driver, or a route of the
     * namespace the driver programs (its packets would go to whichever the kernel prefers). Default
     * routes do not count, nor routes through the network's own bridge when it existed before (a
     * bridge the user made for it, with its address already on it).
     */
    static void checkSubnets(DockerNetwork n, Collection<DockerNetwork> others, List<HostRoute> routes, boolean bridgeExisted) {
        for (DockerNetwork.Subnet s : n.subnets()) {
            Cidr pool = s.pool().masked();
            for (DockerNetwork o : others) {
                if (o.id().equals(n.id())) continue;
                for (DockerNetwork.Subnet t : o.subnets()) {
                    if (overlap(pool, t.pool().masked())) {
                        throw new DriverException("CreateNetwork: " + POOL_OVERLAP + ": " + pool + " overlaps " + t.pool().masked()
                                + " of network " + o.id());
                    }
                }
            }
            for (HostRoute r : routes) {
                if (r.dst().prefix() == 0 || r.dst().isV6() != pool.isV6()) continue;
                if (bridgeExisted && n.linuxBridge() != null && n.linuxBridge().equals(r.dev())) continue;
                if (overlap(pool, r.dst().masked())) {
                    throw new DriverException("CreateNetwork: " + POOL_OVERLAP + ": " + pool + " overlaps the route " + r.dst().masked()
                            + (r.dev() == null ? "" : " dev " + r.dev()) + " on the host (the driver's network namespace)");
                }
            }
        }
    }

    /** The gateway addresses the network would add to a bridge that exists already (those not on it yet). */
    static List<Cidr> lentAddresses(DockerNetwork n, HostLink existing) {
        List<Cidr> out = new ArrayList<>();
        for (Cidr g : n.gatewayAddresses()) {
            if (existing.addresses().stream().noneMatch(a -> a.address().equals(g.address()))) out.add(g);
        }
        return out;
    }

    /**
     * Refuses host ports another endpoint of the driver publishes already, or that the request
     * names twice, with Docker's message ("Bind for 0.0.0.0:8080 failed: port is already
     * allocated"). Two bindings collide when protocol and host port are equal and their host
     * addresses meet: equal, or either unspecified (all addresses).
     *
     * @param published the bindings of every other endpoint, by endpoint ID
     */
    static void checkPorts(List<PortBinding> wanted, Map<String, List<PortBinding>> published) {
        List<PortBinding> seen = new ArrayList<>();
        for (PortBinding w : wanted) {
            for (PortBinding s : seen) if (collide(w, s)) throw allocated(w);
            for (List<PortBinding> other : published.values()) for (PortBinding p : other) if (collide(w, p)) throw allocated(w);
            seen.add(w);
        }
    }

    private static DriverException allocated(PortBinding p) {
        String ip = p.hostIp().isEmpty() ? "0.0.0.0" : p.hostIp();
        return new DriverException("Bind for " + (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + p.hostPort() + " failed: port is already allocated");
    }

    static boolean collide(PortBinding a, PortBinding b) {
        if (!a.protocol().equals(b.protocol()) || a.hostPort() != b.hostPort() || a.hostPort() == 0) return false;
        if (a.hostIp().isEmpty() || b.hostIp().isEmpty()) return true; // no host address: every address
        IpAddr x = IpAddr.parse(a.hostIp()), y = IpAddr.parse(b.hostIp());
        boolean xAll = unspecified(x), yAll = unspecified(y);
        if (!xAll && !yAll) return x.equals(y);
        if (x.isV6() == y.isV6()) return true;
        // across families only "::" meets the other: a dual-stack socket takes IPv4 too
        return (xAll && x.isV6()) || (yAll && y.isV6());
    }

    private static boolean unspecified(IpAddr a) {
        for (byte b : a.bytes()) if (b != 0) return false;
        return true;
    }

    static boolean overlap(Cidr a, Cidr b) {
        return a.isV6() == b.isV6() && (a.contains(b.network()) || b.contains(a.network()));
    }
}
