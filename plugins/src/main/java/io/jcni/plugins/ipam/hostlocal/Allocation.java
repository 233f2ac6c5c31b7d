package io.jcni.plugins.ipam.hostlocal;

/**
 * One address handed out for one range set: what becomes an {@code ips[]} entry of the result.
 *
 * @param rangeSetIndex position of the range set in {@link IpamConfig#ranges()}
 * @param prefixLength the subnet's prefix length, for the {@code address} field
 */
public record Allocation(int rangeSetIndex, IpAddress address, int prefixLength, IpAddress gateway) {

    /** {@code "4"} or {@code "6"}, the result's {@code version} field. */
    public String version() {
        return address.v6() ? "6" : "4";
    }

    /** {@code address/prefix}, the result's {@code address} field. */
    public String cidr() {
        return address + "/" + prefixLength;
    }
}
