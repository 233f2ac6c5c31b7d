package io.jcni.plugins.ipam.hostlocal;

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
    private final IpAddress rangeStart;
    private final IpAddress rangeEnd;
    private final IpAddress gateway;

    private Range(Cidr subnet, IpAddress rangeStart, IpAddress rangeEnd, IpAddress gateway) {
        this.subnet = subnet;
        this.rangeStart = rangeStart;
        this.rangeEnd = rangeEnd;
        this.gateway = gateway;
    }

    /**
     * Validates a range as written in the config and fills its defaults. Any of the arguments may
     * be null (absent in the JSON); the error messages are the reference plugin's.
     */
    public static Range canonicalize(Cidr subnet, IpAddress rangeStart, IpAddress rangeEnd, IpAddress gateway) {
        if (subnet == null) throw new IpamException("IP <nil> not v4 nor v6");
        int bits = subnet.address().bitLength();
        // Can't allocate from a network with no host addresses, e.g. a /32 or /31.
        if (subnet.prefixLength() > bits - 2) {
            throw new IpamException("Network " + subnet + " too small to allocate from");
        }
        IpAddress network = subnet.network();
        if (!network.equals(subnet.address())) {
            throw new IpamException("Network has host bits set. For a subnet mask of length "
                    + subnet.prefixLength() + " the network address is " + network);
        }
        Cidr net = new Cidr(network, subnet.prefixLength());

        IpAddress gw;
        if (gateway == null) {
            gw = network.next();
        } else {
            if (!net.contains(gateway)) {
                throw new IpamException("gateway " + gateway + " not in network " + net);
            }
            gw = gateway;
        }

        // As upstream, the bounds check of an explicit start already honours an explicit end,
        // which is how "start after end" gets reported (as a start outside the network).
        IpAddress start;
        if (rangeStart != null) {
            if (!within(net, rangeStart, rangeStart, rangeEnd)) {
                throw new IpamException("RangeStart " + rangeStart + " not in network " + net);
            }
            start = rangeStart;
        } else {
            start = network.next();
        }

        IpAddress end;
        if (rangeEnd != null) {
            if (!within(net, rangeEnd, start, rangeEnd)) {
                throw new IpamException("RangeEnd " + rangeEnd + " not in network " + net);
            }
            end = rangeEnd;
        } else {
            IpAddress last = net.lastAddress();
            end = net.isV6() ? last : last.previous();
        }
        return new Range(net, start, end, gw);
    }

    private static boolean within(Cidr net, IpAddress ip, IpAddress start, IpAddress end) {
        if (!net.contains(ip)) return false;
        if (start != null && ip.compareTo(start) < 0) return false;
        return end == null || ip.compareTo(end) <= 0;
    }

    public Cidr subnet() {
        return subnet;
    }

    public IpAddress rangeStart() {
        return rangeStart;
    }

    public IpAddress rangeEnd() {
        return rangeEnd;
    }

    public IpAddress gateway() {
        return gateway;
    }

    public boolean isV6() {
        return subnet.isV6();
    }

    /** Whether {@code ip} is inside the subnet and the [rangeStart, rangeEnd] window. */
    public boolean contains(IpAddress ip) {
        return within(subnet, ip, rangeStart, rangeEnd);
    }

    /**
     * Whether the allocator may hand out {@code ip}: inside the window and not the gateway, the
     * network address, or the IPv4 broadcast address. Upstream only skips the gateway; the other
     * two are reachable only when rangeStart/rangeEnd are set to them explicitly, and handing
     * them to a container breaks it, so jcni never does.
     */
    public boolean isAllocatable(IpAddress ip) {
        return contains(ip) && !isReservedAddress(ip);
    }

    /** The gateway, the network address, or the IPv4 broadcast address. */
    boolean isReservedAddress(IpAddress ip) {
        if (ip.equals(gateway) || ip.equals(subnet.network())) return true;
        return !subnet.isV6() && ip.equals(subnet.lastAddress());
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
        IpAddress network = subnet.network();
        IpAddress last = subnet.lastAddress();
        for (IpAddress special : new IpAddress[] {gateway, network, subnet.isV6() ? null : last}) {
            if (special == null || !contains(special)) continue;
            if (special != gateway && special.equals(gateway)) continue; // counted once
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
