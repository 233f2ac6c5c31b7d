package io.jcni.plugins.meta.bandwidth;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.linux.TbfParams;
import io.jcni.linux.Tc;
import io.jcni.plugins.common.link.BirthMarks;
import io.jcni.plugins.common.link.Links;
import io.jcni.plugins.common.link.OwnedLinks;
import io.jcni.plugins.skel.Phases.Phase;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.CniVersion;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code bandwidth} meta plugin: traffic shaping with Linux tc on the host side of a
 * container's veth, chained after a plugin that created it (bridge, ptp, ...).
 *
 * <p>{@code ingressRate}/{@code ingressBurst} (bits per second / bits) limit traffic <em>to</em>
 * the container with a token bucket filter (tbf) on the host veth's egress. {@code egressRate}/
 * {@code egressBurst} limit traffic <em>from</em> the container: tc cannot shape ingress, so an
 * ingress qdisc on the host veth redirects every packet (u32 match-all + mirred) to an ifb device,
 * named {@code bwp} + the first 12 hex digits of sha512(network name + container ID) like the Go
 * plugin's, whose own tbf shapes it. Rate and burst must be set together; the values come from the
 * config or, when it has none, from {@code runtimeConfig.bandwidth} (the {@code bandwidth}
 * capability). ADD returns prevResult with the ifb appended to its interfaces.
 *
 * <p>DEL deletes the ifb (gone already: success; the host veth and its qdiscs go with the
 * interface plugin's DEL); in jcnid it only retires it before answering (down, renamed, its name
 * free again) and deletes it afterwards, and GC also deletes retired ifbs a dead daemon left. CHECK verifies rate, buffer and limit of both tbf qdiscs and the
 * redirect. GC deletes ifbs whose attachment is not among {@code cni.dev/valid-attachments}: jcni
 * labels each ifb it creates with the alias {@code jcni-bandwidth/<network>/<containerID>/<ifname>}
 * (IFLA_IFALIAS, {@code ip link show} prints it; hashed as {@link OwnedLinks} does when too long);
 * ifbs without such an alias (e.g. created by the Go plugin) are never touched, except one born
 * with jcni's birth mark whose creator died before tagging it ({@code BirthMarks}).
 *
 * <p>Differences from upstream: {@code shapedSubnets}/{@code unshapedSubnets} (newer upstream, HTB)
 * are validated and then refused when non-empty; rates below 8 bit/s are refused; a failed ADD
 * removes what it created. Bursts whose tbf buffer overflows the kernel's 32-bit field (containerd
 * always sends 4294967295 bits) are accepted and wrapped exactly as the Go plugin wraps them
 * ({@link TbfParams#forBandwidth}), so tc shows the same qdisc. DEL reads no bandwidth value.
 */
public final class BandwidthPlugin implements Plugin {
    static final String IFB_PREFIX = "bwp";
    static final int MAX_IFNAME = 15;
    static final String ALIAS_KIND = "jcni-bandwidth";

    @Override
    public Result add(PluginRequest req) throws Exception {
        requireVersion(req);
        BandwidthConfig bw = BandwidthConfig.parse(req);
        Result prev = req.requirePrevResult();
        if (bw == null || bw.isZero()) return prev;
        bw.validateSubnets();

        List<Result.Interface> interfaces = new ArrayList<>(prev.interfaces());
        try (Rtnl rt = Rtnl.open()) {
            Link host = hostInterface(rt, prev, req);
            Tc tc = rt.tc();
            List<Runnable> undo = new ArrayList<>();
            try {
                if (bw.shapesIngress()) {
                    tc.addTbf(host.index(), bw.ingressTbf());
                    undo.add(() -> tc.deleteQdisc(host.index(), Tc.HANDLE_ROOT));
                }
                if (bw.shapesEgress()) {
                    String name = ifbName(req.networkName(), req.containerId());
                    // Born marked with this process (BirthMarks): a kill before the tag below leaves
                    // an ifb GC can still attribute and remove.
                    rt.addLink(NewLink.ifb(name).mtu(host.mtu()).txqlen(host.txqlen()).group(BirthMarks.ownGroup()).up());
                    undo.add(() -> rt.deleteLink(name));
                    Link ifb = rt.link(name);
                    rt.setAliasAndGroup(ifb.index(), alias(req.networkName(), req.containerId(), req.ifname()), 0);
                    interfaces.add(new Result.Interface(name, ifb.mac() == null ? null : ifb.mac().toString(), null));
                    tc.addIngress(host.index());
                    undo.add(() -> tc.deleteQdisc(host.index(), Tc.HANDLE_INGRESS));
                    tc.addRedirectFilter(host.index(), Tc.HANDLE_INGRESS_QDISC, ifb.index());
                    tc.addTbf(ifb.index(), bw.egressTbf());
                }
            } catch (RuntimeException e) {
                for (int i = undo.size() - 1; i >= 0; i--) {
                    try {
                        undo.get(i).run();
                    } catch (RuntimeException suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                throw e;
            }
        }
        return prev.withInterfaces(interfaces);
    }

    /** Deletes the ifb, named from network and container alone: the config's values are not read, so they cannot stop a DEL. */
    @Override
    public void del(PluginRequest req) {
        requireVersion(req);
        String name = ifbName(req.networkName(), req.containerId());
        Phase outer = req.phases().enter(Phase.LINK_DELETE);
        try (Rtnl rt = Rtnl.open()) {
            // In jcnid the ifb is only retired now (down, renamed: its name is free for the next
            // ADD) and deleted after the answer, with others; deleting costs RCU waits (~20 ms).
            Optional<Link> ifb = rt.findLink(name);
            if (ifb.isEmpty()) return;
            if (!Links.retireLater(req, rt, ifb.get().index())) rt.deleteLink(name);
        } catch (ErrnoException e) {
            if (!e.is(Errno.ENODEV)) throw e;
        } finally {
            req.phases().enter(outer);
        }
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        requireVersion(req);
        BandwidthConfig bw = BandwidthConfig.parse(req);
        Result prev = req.requirePrevResult();
        try (Rtnl rt = Rtnl.open()) {
            Link host = hostInterface(rt, prev, req);
            if (bw == null || bw.isZero()) return;
            bw.validateSubnets();
            Tc tc = rt.tc();
            if (bw.shapesIngress()) checkTbf(tc, host, bw.ingressTbf());
            if (bw.shapesEgress()) {
                String name = ifbName(req.networkName(), req.containerId());
                Link ifb = rt.findLink(name).orElseThrow(() -> new CniException(ErrorCode.INTERNAL,
                        "get ifb device: link " + name + " not found"));
                checkTbf(tc, ifb, bw.egressTbf());
                boolean redirected = tc.qdiscs(host.index()).stream().anyMatch(q -> "ingress".equals(q.kind()))
                        && tc.filters(host.index(), Tc.HANDLE_INGRESS_QDISC).stream()
                                .anyMatch(f -> f.redirectIndex() == ifb.index());
                if (!redirected) {
                    throw new CniException(ErrorCode.INTERNAL, "ingress of " + host.name() + " is not redirected to " + name);
                }
            }
        }
    }

    @Override
    public void gc(PluginRequest req) {
        Set<String> keep = OwnedLinks.tagsOf(ALIAS_KIND, req.networkName(), req.validAttachments());
        CniException failure = null;
        try (Rtnl rt = Rtnl.open()) {
            List<Link> links = rt.links();
            for (Link l : links) {
                // ours and stale, or retired by a DEL whose deletion never ran (the daemon died)
                if (!"ifb".equals(l.kind()) || !OwnedLinks.isTagOf(ALIAS_KIND, l.alias(), req.networkName())
                        || !(Links.isRetired(l) || (l.name().startsWith(IFB_PREFIX) && !keep.contains(l.alias())))) {
                    continue;
                }
                try {
                    rt.deleteLink(l.index());
                } catch (ErrnoException e) {
                    if (!e.is(Errno.ENODEV)) failure = new CniException(ErrorCode.INTERNAL, "delete ifb " + l.name(), e);
                }
            }
            // An ifb whose creator was killed before it could tag it belongs to no attachment.
            BirthMarks.collectOrphans(rt, links);
        }
        if (failure != null) throw failure;
    }

    /** Upstream's {@code getIfbDeviceName}: "bwp" + sha512(network + containerID) in hex, 15 chars. */
    static String ifbName(String network, String containerId) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-512").digest((network + containerId).getBytes(StandardCharsets.UTF_8));
            return (IFB_PREFIX + HexFormat.of().formatHex(h)).substring(0, MAX_IFNAME);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    static String alias(String network, String containerId, String ifname) {
        return OwnedLinks.tag(ALIAS_KIND, network, containerId, ifname);
    }

    private static void requireVersion(PluginRequest req) {
        if (!req.version().atLeast(CniVersion.V0_3_0)) {
            throw new CniException(ErrorCode.INCOMPATIBLE_VERSION, "incompatible CNI versions",
                    "config is \"" + req.version() + "\", plugin supports [0.3.0 0.3.1 0.4.0 1.0.0 1.1.0]");
        }
    }

    /**
     * The host end of the container interface's veth: the container link's peer index, looked up
     * in this (the host) namespace, must be an interface of prevResult without a sandbox.
     */
    static Link hostInterface(Rtnl host, Result prev, PluginRequest req) {
        if (prev.interfaces().isEmpty()) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "no interfaces provided");
        int peerIndex;
        try (Netns ns = openNetns(req.netns()); Rtnl c = Rtnl.open(ns)) {
            Link l = c.findLink(req.ifname()).orElseThrow(() -> new CniException(ErrorCode.INTERNAL,
                    "container interface " + req.ifname() + " has no veth peer", "no such link in " + req.netns()));
            if (!"veth".equals(l.kind())) {
                throw new CniException(ErrorCode.INTERNAL, "container interface " + req.ifname() + " has no veth peer",
                        "interface " + req.ifname() + " was not a veth interface");
            }
            peerIndex = l.linkIndex();
        }
        if (peerIndex <= 0) {
            throw new CniException(ErrorCode.INTERNAL, "container interface " + req.ifname() + " has no veth peer");
        }
        Link peer;
        try {
            peer = host.link(peerIndex);
        } catch (ErrnoException e) {
            if (!e.is(Errno.ENODEV)) throw e;
            throw new CniException(ErrorCode.INTERNAL, "veth peer with index " + peerIndex + " is not in host ns", "", e);
        }
        for (Result.Interface i : prev.interfaces()) {
            if ((i.sandbox() == null || i.sandbox().isEmpty()) && peer.name().equals(i.name())) return peer;
        }
        throw new CniException(ErrorCode.INTERNAL, "no veth peer of container interface found in host ns",
                "the peer " + peer.name() + " is not an interface of prevResult without a sandbox");
    }

    private static Netns openNetns(String path) {
        try {
            return Netns.open(path);
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INVALID_NETNS, "failed to open netns \"" + path + "\"", e);
        }
    }

    private static void checkTbf(Tc tc, Link link, TbfParams want) {
        Tc.Qdisc q = tc.qdiscs(link.index()).stream()
                .filter(x -> x.parent() == Tc.HANDLE_ROOT && "tbf".equals(x.kind()) && x.tbf() != null)
                .findFirst()
                .orElseThrow(() -> new CniException(ErrorCode.INTERNAL, "Failed to find qdisc", "no root tbf on " + link.name()));
        TbfParams got = q.tbf();
        if (got.rateBytesPerSecond() != want.rateBytesPerSecond()) {
            throw mismatch("Rate", link, got.rateBytesPerSecond(), want.rateBytesPerSecond());
        }
        if (got.limitBytes() != want.limitBytes()) {
            throw mismatch("Limit", link, Integer.toUnsignedLong(got.limitBytes()), Integer.toUnsignedLong(want.limitBytes()));
        }
        if (got.bufferTicks() != want.bufferTicks()) {
            throw mismatch("Buffer", link, Integer.toUnsignedLong(got.bufferTicks()), Integer.toUnsignedLong(want.bufferTicks()));
        }
    }

    private static CniException mismatch(String what, Link link, long got, long want) {
        return new CniException(ErrorCode.INTERNAL, what + " doesn't match", "tbf on " + link.name() + ": " + got + " != " + want);
    }
}
