package io.jcni.plugins.common.nft;

import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code ipMasq} key of bridge and ptp: masquerade the container's traffic leaving its subnet
 * (upstream's ip.SetupIPMasq), done with {@link Masquerade} in jcni's nftables table whatever
 * {@code ipMasqBackend} says. jcni extension: {@code dataDir} (top level) moves the ownership
 * state from /var/lib/cni/jcni/nft, as for portmap.
 */
public final class IpMasq {
    private final Masquerade masquerade;

    private IpMasq(Masquerade masquerade) {
        this.masquerade = masquerade;
    }

    /** The config's masquerading, or null when {@code ipMasq} is not true. */
    public static IpMasq of(Map<String, Object> conf) {
        Fields.string(conf, "ipMasqBackend", "");
        if (!Fields.bool(conf, "ipMasq", "", false)) return null;
        String dir = Fields.string(conf, "dataDir", "");
        return new IpMasq(Masquerade.in(null, dir == null || dir.isEmpty() ? null : Path.of(dir)));
    }

    public void setup(PluginRequest req, List<Result.IpConfig> ips) {
        List<Cidr> cidrs = new ArrayList<>();
        for (Result.IpConfig ip : ips) cidrs.add(ip.address());
        try {
            masquerade.setup(req.networkName(), req.containerId(), req.ifname(), cidrs);
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to set up IP masquerade", e);
        }
    }

    /** DEL: removes the attachment's masquerading; nothing there is no error. */
    public void teardown(PluginRequest req) {
        try {
            masquerade.teardown(req.networkName(), req.containerId(), req.ifname());
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to tear down IP masquerade", e);
        }
    }

    /** GC: masquerading of attachments not in the valid list. */
    public void gc(PluginRequest req) {
        try {
            masquerade.gc(req.networkName(), req.validAttachments());
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to collect IP masquerade", e);
        }
    }
}
