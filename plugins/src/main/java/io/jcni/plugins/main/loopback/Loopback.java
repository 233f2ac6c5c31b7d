package io.jcni.plugins.main.loopback;

import io.jcni.linux.Address;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code loopback} plugin: sets the loopback interface {@code lo} of the container's network
 * namespace up (ADD) or down (DEL). CNI_IFNAME is ignored; there is no IPAM and no config beyond
 * the common keys.
 *
 * <p>ADD returns {@code lo} with MAC 00:00:00:00:00:00 in the sandbox and the first IPv4 and first
 * IPv6 address the kernel gives {@code lo} (normally 127.0.0.1/8 and ::1/128); when chained after
 * another plugin it passes that plugin's result through unchanged. DEL succeeds when the
 * namespace is already gone. CHECK verifies {@code lo} is up.
 */
public final class Loopback implements Plugin {
    static final String LO = "lo";

    @Override
    public Result add(PluginRequest req) {
        List<Result.IpConfig> ips = new ArrayList<>();
        try (Netns ns = Namespaces.open(req.netns()); Rtnl rt = Rtnl.open(ns)) {
            Link lo = rt.link(LO);
            rt.setUp(lo.index());
            for (Family f : new Family[] {Family.INET, Family.INET6}) {
                List<Address> addrs = rt.addresses(lo.index(), f);
                for (Address a : addrs) {
                    if (!a.address().isLoopback()) {
                        throw new CniException(ErrorCode.INTERNAL, "loopback interface found with non-loopback address \""
                                + a.address() + "\"");
                    }
                }
                if (!addrs.isEmpty()) {
                    Address first = addrs.getFirst();
                    ips.add(new Result.IpConfig(first.prefix(), null, 0));
                }
            }
        }
        if (req.prevResult() != null) return req.prevResult();
        return new Result(req.version().toString(), List.of(new Result.Interface(LO, "00:00:00:00:00:00", req.netns())),
                ips, List.of(), null);
    }

    @Override
    public void del(PluginRequest req) {
        if (req.netns().isEmpty()) return;
        // The container (or a previous DEL) already removed the namespace: nothing left to undo.
        Netns ns = Namespaces.openIfExists(req.netns());
        if (ns == null) return;
        try (ns; Rtnl rt = Rtnl.open(ns)) {
            rt.setDown(rt.link(LO).index());
        }
    }

    @Override
    public void check(PluginRequest req) {
        try (Netns ns = Namespaces.open(req.netns()); Rtnl rt = Rtnl.open(ns)) {
            if (!rt.link(LO).up()) throw new CniException(ErrorCode.INTERNAL, "loopback interface is down");
        }
    }
}
