package io.jcni.plugins.ipam.hostlocal;

import io.jcni.types.IpAddr;

/**
 * One address handed out for one range set: what becomes an {@code ips[]} entry of the result.
 *
 * @param rangeSetIndex position of the range set in {@link IpamConfig#ranges()}
 * @param prefix the subnet's prefix length, for the {@code address} field
 */
public record Allocation(int rangeSetIndex, IpAddr address, int prefix, IpAddr gateway) {

    /** {@code "4"} or {@code "6"}, the result's {@code version} field. */
    public String version() {
        return address.isV6() ? "6" : "4";
    }

    /** {@code address/prefix}, the result's {@code address} field. */
    public String cidr() {
        return address + "/" + prefix;
    }
}
