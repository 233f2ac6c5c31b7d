package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.math.BigInteger;

/**
 * One canonical allocation range: a subnet, the inclusive [rangeStart, rangeEnd] window inside it,
 * and the gateway. Built only through {@link #canonicalize}, which fills defaults and validates
 * exactly as the reference {@code Range.Canonicalize} (backend/allocator/range.go) does.
 *
 * <p>Defaults: rangeStart = network + 1, rangeEnd = the last address (minus one for IPv4, so the
 * broadcast address is excluded), gateway = network + 1. The gateway is inside the default window
 * on purpose; the allocator skips it.
 */
public final class Range {
    private final Cidr subnet;
    private final IpAddr rangeStart;
    private final IpAddr rangeEnd;
    private final IpAddr gateway;
    // Computed once: the allocator's walk asks about them for every candidate.
    private final IpAddr network;
    private final IpAddr broadcast; // null for IPv6, which has none

    private Range(Cidr subnet, IpAddr rangeStart, IpAddr rangeEnd, IpAddr gateway) {
        this.subnet = subnet;
        this.rangeStart = rangeStart;
        this.rangeEnd = rangeEnd;
        this.gateway = gateway;
        this.network = subnet.network();
        this.broadcast = subnet.isV6() ? null : subnet.last();
    }

    /**
     * Validates a range as written in the config and fills its defaults. Any of the arguments may
     * be null (absent in the JSON); the error messages are the reference plugin's.
     */
    public static Range canonicalize(Cidr subnet, IpAddr rangeStart, IpAddr rangeEnd, IpAddr gateway) {
        if (subnet == null) throw Errors.config("IP <nil> not v4 nor v6");
        int bits = subnet.address().bits();
        // Can't allocate from a network with no host addresses, e.g. a /32 or /31.
        if (subnet.prefix() > bits - 2) {
            throw Errors.config("Network " + subnet + " too small to allocate from");
        }
        IpAddr network = subnet.network();
        if (!network.equals(subnet.address())) {
            throw Errors.config("Network has host bits set. For a subnet mask of length "
                    + subnet.prefix() + " the network address is " + network);
        }
        Cidr net = new Cidr(network, subnet.prefix());

        IpAddr gw;
        if (gateway == null) {
            gw = network.next();
        } else {
            if (!net.contains(gateway)) {
                throw Errors.config("gateway " + gateway + " not in network " + net);
            }
            gw = gateway;
        }

        // As upstream, the bounds check of an explicit start already honours an explicit end,
        // which is how "start after end" gets reported (as a start outside the network).
        IpAddr start;
        if (rangeStart != null) {
            if (!within(net, rangeStart, rangeStart, rangeEnd)) {
                throw Errors.config("RangeStart " + rangeStart + " not in network " + net);
            }
            start = rangeStart;
        } else {
            start = network.next();
        }

        IpAddr end;
        if (rangeEnd != null) {
            if (!within(net, rangeEnd, start, rangeEnd)) {
                throw Errors.config("RangeEnd " + rangeEnd + " not in network " + net);
            }
            end = rangeEnd;
        } else {
            IpAddr last = net.last();
            end = net.isV6() ? last : last.previous();
        }
        return new Range(net, start, end, gw);
    }

    private static boolean within(Cidr net, IpAddr ip, IpAddr start, IpAddr end) {
        if (!net.contains(ip)) return false;
        if (start != null && ip.compareTo(start) < 0) return false;
        return end == null || ip.compareTo(end) <= 0;
    }

    public Cidr subnet() {
        return subnet;
    }

    public IpAddr rangeStart() {
        return rangeStart;
    }

    public IpAddr rangeEnd() {
        return rangeEnd;
    }

    public IpAddr gateway() {
        return gateway;
    }

    public boolean isV6() {
        return subnet.isV6();
    }

    /** Whether {@code ip} is inside the subnet and the [rangeStart, rangeEnd] window. */
    public boolean contains(IpAddr ip) {
        // The window lies inside the subnet (canonicalize checked), so the bounds decide.
        return ip != null && ip.isV6() == isV6() && ip.compareTo(rangeStart) >= 0 && ip.compareTo(rangeEnd) <= 0;
    }

    /**
     * Whether the allocator may hand out {@code ip}: inside the window and not the gateway, the
     * network address, or the IPv4 broadcast address. Upstream only skips the gateway; the other
     * two are reachable only when rangeStart/rangeEnd are set to them explicitly, and handing
     * them to a container breaks it, so jcni never does.
     */
    public boolean isAllocatable(IpAddr ip) {
        return contains(ip) && !isReservedAddress(ip);
    }

    /** The gateway, the network address, or the IPv4 broadcast address. */
    boolean isReservedAddress(IpAddr ip) {
        return ip.equals(gateway) || ip.equals(network) || ip.equals(broadcast);
    }

    /** Whether the two windows share an address (different families never overlap). */
    public boolean overlaps(Range other) {
        if (isV6() != other.isV6()) return false;
        return contains(other.rangeStart) || contains(other.rangeEnd)
                || other.contains(rangeStart) || other.contains(rangeEnd);
    }

    /** How many addresses the allocator can hand out from this range. */
    public BigInteger allocatableCount() {
        BigInteger n = rangeEnd.toBigInteger().subtract(rangeStart.toBigInteger()).add(BigInteger.ONE);
        if (gateway != null && contains(gateway)) n = n.subtract(BigInteger.ONE);
        for (IpAddr special : new IpAddr[] {network, broadcast}) {
            if (special == null || !contains(special) || special.equals(gateway)) continue; // the gateway is counted once
            n = n.subtract(BigInteger.ONE);
        }
        return n.max(BigInteger.ZERO);
    }

    /** {@code start-end}, as upstream prints a range in error messages. */
    @Override
    public String toString() {
        return rangeStart + "-" + rangeEnd;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Range r && subnet.equals(r.subnet) && rangeStart.equals(r.rangeStart)
                && rangeEnd.equals(r.rangeEnd) && gateway.equals(r.gateway);
    }

    @Override
    public int hashCode() {
        return subnet.hashCode() * 31 + rangeStart.hashCode();
    }
}
