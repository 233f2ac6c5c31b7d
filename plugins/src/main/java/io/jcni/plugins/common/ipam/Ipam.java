package io.jcni.plugins.common.ipam;

import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.runtime.Delegator;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;

/**
 * Calls the IPAM plugin named by the config's {@code ipam.type} (pkg/ipam's ExecAdd/ExecDel/...):
 * it gets the caller's stdin and environment unchanged but for CNI_COMMAND. Goes through the
 * request's delegator ({@link Delegation} outside tests), so jcni's own IPAM plugins run in-process.
 */
public final class Ipam {
    private final Delegator delegator;
    private final String type;

    public Ipam(Delegator delegator, String type) {
        this.delegator = delegator;
        this.type = type;
    }

    /** The IPAM of {@code req}'s config, or null when it has none. */
    public static Ipam of(PluginRequest req) {
        String t = NetConfs.ipamType(req.conf());
        return t == null ? null : new Ipam(req.delegator(), t);
    }

    /** STATUS of a plugin whose readiness is its IPAM's: asks the IPAM plugin, if there is one. */
    /** GC of a plugin whose only state is its IPAM's (nothing of it stays on the host): the IPAM's GC, if any. */
    public static void gcOf(PluginRequest req) {
        Ipam ipam = of(req);
        if (ipam != null) ipam.gc(req);
    }

    public static void statusOf(PluginRequest req) {
        Ipam ipam = of(req);
        if (ipam != null) ipam.status(req);
    }

    public String type() {
        return type;
    }

    /** ADD; a result without any IP is an error, as upstream's "IPAM plugin returned missing IP config". */
    public Result add(PluginRequest req) {
        Result r = delegator.add(type, req.stdin(), req.env());
        if (r.ips().isEmpty()) throw new CniException(ErrorCode.INTERNAL, "IPAM plugin returned missing IP config");
        return r;
    }

    public void del(PluginRequest req) {
        delegator.del(type, req.stdin(), req.env());
    }

    public void check(PluginRequest req) {
        delegator.check(type, req.stdin(), req.env());
    }

    public void gc(PluginRequest req) {
        delegator.gc(type, req.stdin(), req.env());
    }

    public void status(PluginRequest req) {
        delegator.status(type, req.stdin(), req.env());
    }
}
