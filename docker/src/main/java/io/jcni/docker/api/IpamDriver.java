package io.jcni.docker.api;

import io.jcni.types.Cidr;
import java.util.Map;

/** The IpamDriver side of the remote API, after decoding. Errors are {@link DriverException}s. */
public interface IpamDriver {

    /** Kuryr's names, which libnetwork passes back as RequestPool's AddressSpace. */
    String LOCAL_SPACE = "local_scope";
    String GLOBAL_SPACE = "global_scope";

    record PoolAnswer(String poolId, Cidr pool, Map<String, String> data) {}

    PoolAnswer requestPool(IpamCalls.RequestPool r);

    void releasePool(IpamCalls.ReleasePool r);

    /** @return the address with the pool's prefix length, "10.0.0.2/24" */
    Cidr requestAddress(IpamCalls.RequestAddress r);

    void releaseAddress(IpamCalls.ReleaseAddress r);
}
