package io.jcni.plugins.ipam.dhcp;

import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code dhcp} IPAM plugin: addresses from a DHCP server on the container's network, through
 * jcnid's DHCP service ({@code jcnid start --dhcp}), which acquires the lease from inside the
 * container's namespace, keeps it on disk and renews it for as long as the container lives. The
 * plugin itself holds nothing: without the service it fails with a clear error, as the reference
 * plugin does without its daemon. Differences from the reference: README.md next to this file.
 */
public final class Dhcp implements Plugin {

    @Override
    public Result add(PluginRequest req) {
        DhcpConf c = DhcpConf.load(req);
        Map<String, Object> r = attachment(req);
        r.put("op", "add");
        r.put("netns", Path.of(req.netns()).toAbsolutePath().toString());
        r.put("request", c.requested().stream().map(Integer::longValue).map(Object.class::cast).toList());
        Map<String, Object> provide = new LinkedHashMap<>();
        c.provided().forEach((k, v) -> provide.put(Integer.toString(k), HexFormat.of().formatHex(v)));
        r.put("provide", provide);
        r.put("timeoutMillis", c.timeoutMillis());
        Map<String, Object> lease = Json.asObject(new LeaseKeeper(c.socketPath()).call(r, c.timeoutMillis()).get("lease"));
        return toResult(lease);
    }

    @Override
    public void del(PluginRequest req) {
        DhcpConf c = DhcpConf.load(req);
        Map<String, Object> r = attachment(req);
        r.put("op", "del");
        new LeaseKeeper(c.socketPath()).call(r, DhcpConf.DEFAULT_TIMEOUT_MILLIS);
    }

    /** The service must hold a lease for the attachment, and prevResult must carry its address. */
    @Override
    public void check(PluginRequest req) {
        DhcpConf c = DhcpConf.load(req);
        Map<String, Object> r = attachment(req);
        r.put("op", "check");
        Result have = toResult(Json.asObject(new LeaseKeeper(c.socketPath()).call(r, DhcpConf.DEFAULT_TIMEOUT_MILLIS).get("lease")));
        Result prev = req.prevResult();
        if (prev == null) return;
        IpAddr leased = have.ips().getFirst().address().address();
        if (prev.ips().stream().noneMatch(ip -> ip.address().address().equals(leased))) {
            throw new CniException(ErrorCode.INTERNAL, "dhcp: the leased address " + leased + " is not in prevResult");
        }
    }

    /** Releases the leases of this network whose attachments are not in the valid list. */
    @Override
    public void gc(PluginRequest req) {
        DhcpConf c = DhcpConf.load(req);
        List<Object> valid = new ArrayList<>();
        for (Attachment a : req.validAttachments()) valid.add(List.of(a.containerId(), a.ifname()));
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("op", "gc");
        r.put("network", req.networkName());
        r.put("valid", valid);
        new LeaseKeeper(c.socketPath()).call(r, DhcpConf.DEFAULT_TIMEOUT_MILLIS);
    }

    /** Available when the service answers. */
    @Override
    public void status(PluginRequest req) {
        DhcpConf c = DhcpConf.load(req);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("op", "status");
        try {
            new LeaseKeeper(c.socketPath()).call(r, 1000);
        } catch (CniException e) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, e.getMessage(), e.details());
        }
    }

    private static Map<String, Object> attachment(PluginRequest req) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("containerId", req.containerId());
        r.put("network", req.networkName());
        r.put("ifname", req.ifname());
        return r;
    }

    /** The result as the reference builds it: one address with the router as gateway, the routes, and DNS. */
    static Result toResult(Map<String, Object> lease) {
        Cidr address = Cidr.parse((String) lease.get("address"));
        IpAddr gw = lease.get("gateway") instanceof String g ? IpAddr.parse(g) : null;
        List<Result.Route> routes = new ArrayList<>();
        for (Object o : Json.asList(lease.get("routes"))) {
            Map<String, Object> rt = Json.asObject(o);
            routes.add(new Result.Route(Cidr.parse((String) rt.get("dst")),
                    rt.get("gw") instanceof String g ? IpAddr.parse(g) : null));
        }
        List<String> ns = new ArrayList<>();
        for (Object o : Json.asList(lease.getOrDefault("nameservers", List.of()))) ns.add((String) o);
        String domain = lease.get("domain") instanceof String d && !d.isEmpty() ? d : null;
        Result.Dns dns = ns.isEmpty() && domain == null ? Result.Dns.EMPTY : new Result.Dns(ns, domain, List.of(), List.of());
        return new Result(CniVersion.CURRENT.toString(), List.of(), List.of(new Result.IpConfig(address, gw, null)), routes, dns);
    }
}
