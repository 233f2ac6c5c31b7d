package io.jcni.plugins.ipam.staticip;

import io.jcni.plugins.ipam.IpamConf;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.IpAddr;
import io.jcni.types.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code static} IPAM plugin: hands out exactly the addresses it is configured with.
 *
 * <p>Addresses come from {@code ipam.addresses}, then CNI_ARGS {@code IP=} (added) and
 * {@code GATEWAY=}; {@code args.cni.ips} and then {@code runtimeConfig.ips} replace them all. It
 * allocates nothing, so DEL has nothing to do.
 */
public final class StaticIpam implements Plugin {

    /** One configured address; the gateway may be null. */
    record Address(Cidr cidr, IpAddr gateway) {}

    record Config(List<Address> addresses, List<Result.Route> routes, Result.Dns dns) {}

    static Config load(PluginRequest req) {
        Map<String, Object> ipam = IpamConf.ipam(req.conf());
        List<Address> addresses = new ArrayList<>();
        List<Object> raw = Fields.list(ipam, "addresses", "ipam");
        if (raw != null) {
            for (int i = 0; i < raw.size(); i++) {
                String where = "ipam.addresses[" + i + "]";
                Map<String, Object> m = Fields.element(raw.get(i), where);
                String gw = Fields.string(m, "gateway", where);
                addresses.add(new Address(cidr(Fields.string(m, "address", where)), gw == null ? null : ip(gw, where + ".gateway")));
            }
        }

        req.args().requireKnown(Set.of("IP", "GATEWAY"));
        String envIps = req.args().get("IP");
        if (envIps != null && !envIps.isEmpty()) {
            for (String item : envIps.split(",")) addresses.add(new Address(cidr(item.trim()), null));
        }
        String envGws = req.args().get("GATEWAY");
        if (envGws != null && !envGws.isEmpty()) {
            for (String item : envGws.split(",")) {
                IpAddr gw = ip(item.trim(), "CNI_ARGS GATEWAY");
                for (int i = 0; i < addresses.size(); i++) {
                    if (addresses.get(i).cidr().contains(gw)) addresses.set(i, new Address(addresses.get(i).cidr(), gw));
                }
            }
        }

        Map<String, Object> args = Fields.object(req.conf(), "args", "");
        Map<String, Object> cniArgs = args == null ? null : Fields.object(args, "cni", "args");
        List<String> argIps = cniArgs == null ? null : Fields.stringList(cniArgs, "ips", "args.cni");
        if (argIps != null && !argIps.isEmpty()) addresses = replaceWith(argIps);
        List<String> rcIps = Fields.stringList(req.runtimeConfig(), "ips", "runtimeConfig");
        if (rcIps != null && !rcIps.isEmpty()) addresses = replaceWith(rcIps);

        long v4 = addresses.stream().filter(a -> !a.cidr().isV6()).count();
        if ((v4 > 1 || addresses.size() - v4 > 1) && req.version().hasLegacyResult()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG,
                    "CNI version " + req.version() + " does not support more than 1 address per family");
        }
        return new Config(addresses, IpamConf.routes(ipam), IpamConf.dns(ipam));
    }

    @Override
    public Result add(PluginRequest req) {
        Config c = load(req);
        List<Result.IpConfig> ips = new ArrayList<>();
        for (Address a : c.addresses()) {
            ips.add(new Result.IpConfig(a.cidr(), a.gateway(), null));
        }
        return new Result(CniVersion.CURRENT.toString(), List.of(), ips, c.routes(), c.dns());
    }

    @Override
    public void del(PluginRequest req) {
        // Nothing was allocated; validating the config is still useful to surface mistakes.
    }

    /** Every configured address must be in prevResult, with the configured gateway if one is set. */
    @Override
    public void check(PluginRequest req) {
        Config c = load(req);
        Result prev = req.requirePrevResult();
        for (Address a : c.addresses()) {
            for (Result.IpConfig ip : prev.ips()) {
                if (!ip.ip().equals(a.cidr().address())) continue;
                if (a.gateway() != null && !a.gateway().equals(ip.gateway())) {
                    throw new CniException(ErrorCode.INTERNAL, "static: Failed to match addr " + ip.ip() + " on interface " + req.ifname());
                }
                break;
            }
        }
    }

    private static List<Address> replaceWith(List<String> cidrs) {
        List<Address> out = new ArrayList<>();
        for (String s : cidrs) out.add(new Address(cidr(s), null));
        return out;
    }

    private static Cidr cidr(String s) {
        Cidr c = Cidr.tryParse(s);
        if (c == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid CIDR " + s);
        return c;
    }

    private static IpAddr ip(String s, String where) {
        IpAddr a = IpAddr.tryParse(s);
        if (a == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid gateway address: " + s, where);
        return a;
    }
}
