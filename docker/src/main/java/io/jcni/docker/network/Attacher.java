package io.jcni.docker.network;

import io.jcni.runtime.RuntimeConf;
import io.jcni.types.Cidr;
import io.jcni.types.NetConfList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The effects of Join, Leave and port publishing.
 *
 * <p>Docker creates a container's network namespace only after Join has answered (runc makes it and
 * libnetwork's set-key hook hands it over), so the chain cannot run in the sandbox. It runs in a
 * staging namespace instead; the interface it made is then handed to this namespace under a name
 * Join answers as {@code InterfaceName.SrcName}, and libnetwork moves it into the sandbox, names it
 * {@code eth<N>} and gives it its addresses, MAC and routes, exactly as it does for its own drivers.
 */
public interface Attacher {

    /** The interface name inside the staging namespace, and the CNI_IFNAME of the attachment. */
    String STAGING_IFNAME = "eth0";

    /**
     * The chain's ADD (libcni's AddNetworkList) in a fresh staging namespace; afterwards the
     * container interface is down, in this namespace, named {@code srcName}, and the staging
     * namespace is gone. The result is cached for DEL and {@link #publish}.
     */
    void add(NetConfList list, RuntimeConf rt, String srcName);

    /** The chain's DEL with the cached result, and the interface {@code srcName} if it is back in this namespace; idempotent. */
    void del(NetConfList list, RuntimeConf rt, String srcName);

    /**
     * Deletes the interface {@code name} (and so its veth peer) if it is in this namespace. The
     * kernel takes 15-30 ms to delete a veth; with {@code background} that happens after the call
     * has been answered.
     */
    void dropInterface(String name, boolean background);

    /** portmap's ADD alone, with the chain's cached result as prevResult and these portMappings. */
    void publish(NetConfList list, RuntimeConf rt, List<Map<String, Object>> portMappings);

    /** portmap's DEL alone. */
    void unpublish(NetConfList list, RuntimeConf rt);

    /**
     * Lets the network's bridge through dockerd's FORWARD policy and masquerades the given subnets
     * ({@link Forwarding}); idempotent.
     */
    void openNetwork(String bridge, boolean internal, List<String> masquerade);

    /**
     * A network's leftovers once its last endpoint is gone: CNI GC with no valid attachment, then
     * what the driver made for it and recorded as its own ({@link Teardown}), nothing else.
     */
    void removeNetwork(NetConfList list, Teardown teardown);

    /**
     * What {@link #removeNetwork} takes away besides the CNI GC.
     *
     * @param bridge          the network's Linux bridge (null: none)
     * @param closeForwarding remove the bridge's forwarding rules and the masquerade rules of {@code masquerade}
     *                        (false while another network still uses the bridge)
     * @param deleteBridge    delete the bridge: jcni made it (and it is still a bridge)
     * @param lentAddresses   addresses jcni put on a bridge it does not own, to take off it again
     */
    record Teardown(String bridge, boolean internal, List<String> masquerade, boolean closeForwarding, boolean deleteBridge,
            List<Cidr> lentAddresses) {}

    /** An interface of the driver's namespace: its kind (IFLA_INFO_KIND; "" for none) and addresses. */
    record HostLink(String name, String kind, List<Cidr> addresses) {}

    /** A route of the driver's namespace's main table (dev null when it has no output interface). */
    record HostRoute(Cidr dst, String dev) {}

    /** The interface {@code name} of the driver's namespace, if there is one. */
    Optional<HostLink> hostLink(String name);

    /** The main routing table of the driver's namespace, both families. */
    List<HostRoute> hostRoutes();

    /** Waits for interface deletions still running in the background ({@link #dropInterface}). */
    void settle();

    /** Whether the sandbox exists (a namespace file or bind mount). */
    boolean sandboxExists(String sandboxKey);
}
