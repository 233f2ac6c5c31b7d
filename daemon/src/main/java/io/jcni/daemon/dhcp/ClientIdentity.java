package io.jcni.daemon.dhcp;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Who the client is towards the server and what it asks for: the same for every message of a lease.
 *
 * @param clientId   option 61's text, {@code containerID/network/ifname} as the reference sends it
 * @param mac        chaddr: the interface's hardware address
 * @param requested  option codes for the parameter request list (option 55)
 * @param provided   options sent as they are (e.g. host-name), code to value
 */
public record ClientIdentity(String clientId, byte[] mac, List<Integer> requested, Map<Integer, byte[]> provided) {

    /** The reference's identifier: containerID/network/ifname, cut to 254 bytes (option 61 holds 255 with its type byte). */
    public static String clientId(String containerId, String network, String ifname) {
        String id = containerId + "/" + network + "/" + ifname;
        byte[] b = id.getBytes(StandardCharsets.UTF_8);
        return b.length <= 254 ? id : new String(Arrays.copyOf(b, 254), StandardCharsets.UTF_8);
    }

    /** Option 61's value: type 0 (not a hardware address) followed by the identifier, as the reference sends it. */
    public byte[] clientIdOption() {
        byte[] id = clientId.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[Math.min(255, 1 + id.length)];
        System.arraycopy(id, 0, out, 1, out.length - 1);
        return out;
    }
}
