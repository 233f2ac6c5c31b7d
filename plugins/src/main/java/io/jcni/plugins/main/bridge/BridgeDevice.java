package io.jcni.plugins.main.bridge;

import static io.jcni.plugins.common.Kernel.kernel;
import static io.jcni.plugins.common.Kernel.kernelIgnoring;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ip.Sysctls;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.util.List;

/** The bridge device itself: created or found and set up, and its gateway addresses. */
final class BridgeDevice {
    private BridgeDevice() {
    }

    /**
     * Creates the bridge if missing, checks an existing link is one, sets it up (ensureBridge).
     * Upstream sends the create, the "up" and (with promiscMode) the promisc request on every ADD;
     * here a bridge that is already so costs one lookup: each of those requests takes the rtnl lock,
     * which concurrent pods queue for.
     */
    static Link ensureBridge(Rtnl host, BridgeConf n) {
        if (host.findLink(n.bridge()).isEmpty()) {
            try {
                host.addLink(NewLink.bridge(n.bridge()).mtu(n.mtu()));
            } catch (ErrnoException e) {
                if (!e.is(Errno.EEXIST)) { // EEXIST: a concurrent ADD made it
                    throw new CniException(ErrorCode.INTERNAL, "failed to create bridge \"" + n.bridge() + "\"",
                            "could not add \"" + n.bridge() + "\": " + e.getMessage(), e);
                }
            }
        }
        Link br = bridgeByName(host, n.bridge());
        boolean changed = false;
        if (n.promiscMode() && !br.promisc()) {
            kernel("could not set promiscuous mode on \"" + n.bridge() + "\"", () -> host.setPromisc(br.index(), true));
            changed = true;
        }
        // We want to own the routes for this interface.
        String acceptRa = Sysctls.perIface("ipv6", n.bridge(), "accept_ra");
        if (!"0".equals(Sysctls.tryGet(acceptRa))) Sysctls.trySet(acceptRa, "0");
        if (!br.up()) {
            host.setUp(br.index());
            changed = true;
        }
        return changed ? host.link(br.index()) : br;
    }

    static Link bridgeByName(Rtnl host, String name) {
        Link l = kernel("could not lookup \"" + name + "\"", () -> host.link(name));
        if (!"bridge".equals(l.kind())) {
            throw new CniException(ErrorCode.INTERNAL, "\"" + name + "\" already exists but is not a bridge");
        }
        return l;
    }

    /** One family's gateway addresses on the bridge, and forwarding on for that family when it has any. */
    static void gatewayFamily(Rtnl host, BridgeConf n, List<Cidr> gateways, String forwardingSysctl) {
        for (Cidr gw : gateways) ensureAddr(host, n.bridge(), gw, n.forceAddress());
        if (!gateways.isEmpty()) kernel("failed to enable forwarding", () -> Sysctls.echo1(forwardingSysctl));
    }

    /**
     * Puts the gateway address on the bridge (ensureAddr). Another IPv4 address, or an overlapping
     * IPv6 one, is an error unless {@code forceAddress}, which replaces it. Then the bridge's MAC is
     * set to itself so it stops following the lowest port MAC.
     */
    static void ensureAddr(Rtnl host, String brName, Cidr gw, boolean forceAddress) {
        Link br = host.link(brName);
        Family fam = gw.isV6() ? Family.INET6 : Family.INET;
        for (Address a : host.addresses(br.index(), fam)) {
            Cidr have = a.prefix();
            if (have.equals(gw)) return;
            if (!gw.isV6() || have.contains(gw.address()) || gw.contains(have.address())) {
                if (!forceAddress) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to set bridge addr",
                            "\"" + brName + "\" already has an IP address different from " + gw);
                }
                kernel("could not remove IP address from \"" + brName + "\"",
                        () -> host.deleteAddress(br.index(), a.address(), a.prefixLength()));
            }
        }
        kernelIgnoring(Errno.EEXIST, "could not add IP address to \"" + brName + "\"",
                () -> host.addAddress(br.index(), gw));
        kernel("could not set bridge's mac", () -> host.setMac(br.index(), host.link(br.index()).mac()));
    }
}
