package io.jcni.docker.api;

import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.Map;

/** The IpamDriver calls of libnetwork's remote API (ipams/remote/api), decoded and checked. */
public final class IpamCalls {
    private IpamCalls() {}

    /** RequestAddressType's value when libnetwork asks for a network's gateway. */
    public static final String GATEWAY_TYPE = "com.docker.network.gateway";

    /**
     * @param pool    --subnet; null asks for a default pool
     * @param subPool --ip-range; null means the whole pool
     */
    public record RequestPool(String addressSpace, Cidr pool, Cidr subPool, Map<String, String> options, boolean v6) {
        public static RequestPool parse(Body b) {
            boolean v6 = b.bool("V6");
            Cidr pool = NetworkCalls.cidr(b, "Pool", v6);
            Cidr sub = NetworkCalls.cidr(b, "SubPool", v6);
            if (pool != null && !pool.equals(pool.masked())) throw b.bad("Pool", pool + " has host bits set (did you mean " + pool.masked() + "?)");
            if (sub != null && pool == null) throw b.bad("SubPool", "an --ip-range needs a --subnet");
            if (sub != null && (sub.prefix() < pool.prefix() || !pool.contains(sub.address()))) {
                throw b.bad("SubPool", sub + " is not inside the pool " + pool);
            }
            if (sub != null) sub = sub.masked();
            return new RequestPool(b.requiredString("AddressSpace"), pool, sub, b.stringMap("Options"), v6);
        }
    }

    public record ReleasePool(String poolId) {
        public static ReleasePool parse(Body b) {
            return new ReleasePool(b.id("PoolID"));
        }
    }

    /** @param address the wanted address (--ip, --gateway); null lets the driver choose */
    public record RequestAddress(String poolId, IpAddr address, Map<String, String> options) {
        public static RequestAddress parse(Body b) {
            return new RequestAddress(b.id("PoolID"), ip(b, "Address"), b.stringMap("Options"));
        }

        public boolean gateway() {
            return GATEWAY_TYPE.equals(options.get("RequestAddressType"));
        }
    }

    public record ReleaseAddress(String poolId, IpAddr address) {
        public static ReleaseAddress parse(Body b) {
            IpAddr a = ip(b, "Address");
            if (a == null) throw b.bad("Address", "missing");
            return new ReleaseAddress(b.id("PoolID"), a);
        }
    }

    /** A plain address; libnetwork sends no prefix here, but a CIDR is accepted for its address. */
    private static IpAddr ip(Body b, String key) {
        String s = b.string(key);
        if (s.isEmpty()) return null;
        int slash = s.indexOf('/');
        IpAddr a = IpAddr.tryParse(slash < 0 ? s : s.substring(0, slash));
        if (a == null) throw b.bad(key, "not an IP address: " + s);
        return a;
    }
}
