package io.jcni.docker.network;

import io.jcni.runtime.RuntimeConf;
import io.jcni.spec.NetConfList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The effects of Join, Leave and port publishing: CNI operations and a look into sandboxes. */
public interface Attacher {

    /** The chain's ADD (libcni's AddNetworkList); the result is cached for DEL and for {@link #publish}. */
    void add(NetConfList list, RuntimeConf rt);

    /** The chain's DEL, in reverse order, with the cached result; idempotent. */
    void del(NetConfList list, RuntimeConf rt);

    /** portmap's ADD alone, with the chain's cached result as prevResult and these portMappings. */
    void publish(NetConfList list, RuntimeConf rt, List<Map<String, Object>> portMappings);

    /** portmap's DEL alone. */
    void unpublish(NetConfList list, RuntimeConf rt);

    /** A network's leftovers once its last endpoint is gone: CNI GC with no valid attachment, then its bridge. */
    void removeNetwork(NetConfList list, String bridge);

    /** Interface names in a sandbox (to pick the next free ethN). */
    Set<String> interfaces(String sandboxKey);

    /** Whether the sandbox still exists (a namespace file or bind mount). */
    boolean sandboxExists(String sandboxKey);
}
