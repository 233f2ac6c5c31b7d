package io.jcni.plugins.ipam.hostlocal;

import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The {@code host-local} IPAM plugin: CNI plumbing over {@link HostLocal}.
 *
 * <ul>
 *   <li>ADD: one address per range set, as upstream's cmdAdd. The result has {@code ips} (each with
 *       its range's gateway and no {@code interface} index: an IPAM plugin knows no interfaces),
 *       the configured {@code routes} and the {@code dns} read from {@code resolvConf}. It is built
 *       in the newest version; the skeleton prints it in the config's.</li>
 *   <li>DEL: releases the attachment's addresses; releasing nothing is success.</li>
 *   <li>CHECK: the attachment holds at least one address (upstream's cmdCheck); jcni also checks
 *       that every address of prevResult inside one of the range sets is held by the attachment.</li>
 *   <li>GC (1.1.0): releases every reservation whose attachment is not in
 *       {@code cni.dev/valid-attachments}.</li>
 *   <li>STATUS (1.1.0): code 50 when the data directory cannot be written or a range set is full.
 *       Never 51: host-local has no datapath, so running containers are not affected.</li>
 * </ul>
 */
public final class HostLocalPlugin implements Plugin {

    static IpamConfig config(PluginRequest req) {
        return IpamConfig.load(req.conf(), req.args());
    }

    @Override
    public Result add(PluginRequest req) {
        HostLocal.AddResult r = HostLocal.add(config(req), req.containerId(), req.ifname());
        List<Result.IpConfig> ips = new ArrayList<>();
        for (Allocation a : r.ips()) ips.add(new Result.IpConfig(new Cidr(a.address(), a.prefix()), a.gateway(), null));
        return new Result(CniVersion.CURRENT.toString(), List.of(), ips, r.routes(), r.dns());
    }

    @Override
    public void del(PluginRequest req) {
        // Only where the reservations are is read: neither runtimeConfig (ips, ipRanges) nor
        // CNI_ARGS nor the ranges can stop a DEL from releasing what the attachment holds.
        HostLocal.release(IpamConfig.storeOf(req.conf()), req.containerId(), req.ifname());
    }

    @Override
    public void check(PluginRequest req) {
        IpamConfig c = config(req);
        List<IpAddr> held = HostLocal.check(c, req.containerId(), req.ifname());
        if (req.prevResult() == null) return;
        for (Result.IpConfig ip : req.prevResult().ips()) {
            IpAddr addr = ip.ip();
            if (held.contains(addr)) continue;
            if (c.ranges().stream().anyMatch(set -> set.contains(addr))) {
                throw new CniException(ErrorCode.INTERNAL, "host-local: address " + addr
                        + " is not reserved for container " + req.containerId() + " interface " + req.ifname());
            }
        }
    }

    @Override
    public void gc(PluginRequest req) {
        Set<Attachment> valid = new LinkedHashSet<>(req.validAttachments());
        HostLocal.gc(config(req), valid);
    }

    @Override
    public void status(PluginRequest req) {
        HostLocalStatus s = HostLocal.status(config(req));
        if (!s.dataDirUsable()) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "host-local: data directory unusable", s.problem());
        }
        List<HostLocalStatus.RangeSetStatus> full = s.rangeSets().stream()
                .filter(HostLocalStatus.RangeSetStatus::exhausted).toList();
        if (!full.isEmpty()) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "host-local: no IP addresses available",
                    full.stream().map(f -> "range set " + f.index() + ": " + f.rangeSet())
                            .collect(Collectors.joining("; ")));
        }
    }
}
