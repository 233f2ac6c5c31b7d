package io.jcni.plugins.meta.tuning;

import static io.jcni.plugins.common.Kernel.kernel;

import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.linux.Sysctl;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code tuning} meta plugin (chained after a plugin that created the interface): changes
 * network sysctls and attributes of CNI_IFNAME inside the container's network namespace and
 * passes the previous result through, with the interface's new MAC when it set one.
 *
 * <ul>
 *   <li>{@code sysctl}: {@code {"net.core.somaxconn": "500", "net.ipv4.conf.IFNAME.arp_filter": "1"}};
 *       keys must lie under /proc/sys/net, {@code IFNAME} stands for CNI_IFNAME; when
 *       /etc/cni/tuning/allowlist.conf exists its regular expressions limit the keys.</li>
 *   <li>{@code mac}, {@code mtu}, {@code promisc} (true only), {@code allmulti}, {@code txQLen}.
 *       The MAC may also come from CNI_ARGS {@code MAC=}, the {@code mac} capability
 *       ({@code runtimeConfig.mac}) and {@code args.cni}, which also overrides the other settings.</li>
 *   <li>{@code dataDir} (default /run/cni/tuning): where ADD saves the original MAC, MTU, promisc,
 *       allmulti and txQLen of the interface; DEL restores them and removes the file.</li>
 * </ul>
 * DEL always succeeds once the config parses; CHECK verifies every setting is in effect (and, as
 * upstream, that the interface is not promiscuous unless {@code promisc} is set).
 */
public final class Tuning implements Plugin {
    private final Path allowlist;

    public Tuning() {
        this(SysctlKeys.DEFAULT_ALLOWLIST);
    }

    /** For tests: the sysctl allowlist file to honour instead of /etc/cni/tuning/allowlist.conf. */
    Tuning(Path allowlist) {
        this.allowlist = allowlist;
    }

    @Override
    public Result add(PluginRequest req) {
        SysctlKeys.checkDuplicates(req.stdin());
        TuningConf conf = TuningConf.parse(req);
        SysctlKeys.checkAllowlist(conf.sysctl(), allowlist);
        Result result = prevResult(req);
        Map<String, String> paths = SysctlKeys.resolveAll(conf.sysctl(), req.ifname());

        try (Netns ns = Namespaces.open(req.netns()); Rtnl rt = Rtnl.open(ns)) {
            for (Map.Entry<String, String> e : conf.sysctl().entrySet()) {
                try {
                    Sysctl.set(ns, paths.get(e.getKey()), e.getValue());
                } catch (ErrnoException ex) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to set sysctl \"" + e.getKey() + "\" to \"" + e.getValue() + "\"", ex);
                }
            }
            if (!conf.changesLink()) return result;

            Link link = link(rt, req.ifname());
            Backup.of(link, conf).save(Backup.file(conf.dataDir(), req.containerId(), req.ifname()));
            int ix = link.index();
            String ifname = req.ifname();
            if (conf.mac() != null) {
                kernel("failed to set MAC address " + conf.mac() + " on " + ifname, () -> rt.setMac(ix, conf.mac()));
                result = withMac(result, ifname, conf.mac().toString());
            }
            if (conf.promisc()) kernel("failed to set promiscuous mode on " + ifname, () -> rt.setPromisc(ix, true));
            if (conf.mtu() != 0) kernel("failed to set MTU " + conf.mtu() + " on " + ifname, () -> rt.setMtu(ix, conf.mtu()));
            if (conf.allmulti() != null) {
                kernel("failed to set all-multicast mode on " + ifname, () -> rt.setAllmulti(ix, conf.allmulti()));
            }
            if (conf.txQLen() != null) {
                kernel("failed to set transmit queue length " + conf.txQLen() + " on " + ifname, () -> rt.setTxqlen(ix, conf.txQLen()));
            }
        }
        return result;
    }

    /**
     * Restores what ADD saved. Like upstream, DEL fails only on a bad config: a missing namespace,
     * interface or file means there is nothing left to restore. Unlike upstream, the saved file is
     * also removed when the namespace or interface is gone, so it cannot leak.
     */
    @Override
    public void del(PluginRequest req) {
        Path file = Backup.file(TuningConf.dataDir(req.conf()), req.containerId(), req.ifname());
        if (!Files.exists(file)) return;
        Netns ns;
        try {
            ns = Netns.open(req.netns());
        } catch (ErrnoException | IllegalArgumentException e) {
            removeQuietly(file, req.log());
            return;
        }
        try (ns; Rtnl rt = Rtnl.open(ns)) {
            Link link = rt.findLink(req.ifname()).orElse(null);
            if (link == null) {
                removeQuietly(file, req.log());
                return;
            }
            List<String> errors = restore(rt, link.index(), Backup.load(file, req.log()));
            if (errors.isEmpty()) {
                removeQuietly(file, req.log());
            } else {
                // Upstream ignores restore failures on DEL and keeps the file; say what happened.
                req.log().println("tuning: DEL " + req.containerId() + "/" + req.ifname() + ": " + String.join("; ", errors));
            }
        }
    }

    private static List<String> restore(Rtnl rt, int ix, Backup b) {
        List<String> errors = new ArrayList<>();
        if (b == null) return errors;
        if (b.mtu() != 0) attempt(errors, "failed to restore MTU", () -> rt.setMtu(ix, b.mtu()));
        if (b.mac() != null && !b.mac().isEmpty()) {
            attempt(errors, "failed to restore MAC address", () -> rt.setMac(ix, b.macAddress()));
        }
        if (b.promisc() != null) attempt(errors, "failed to restore promiscuous mode", () -> rt.setPromisc(ix, b.promisc()));
        if (b.allmulti() != null) {
            attempt(errors, "failed to restore all-multicast mode", () -> rt.setAllmulti(ix, b.allmulti()));
        }
        if (b.txQLen() != null) {
            attempt(errors, "failed to restore transmit queue length", () -> rt.setTxqlen(ix, b.txQLen()));
        }
        return errors;
    }

    @Override
    public void check(PluginRequest req) {
        SysctlKeys.checkDuplicates(req.stdin());
        TuningConf conf = TuningConf.parse(req);
        prevResult(req);
        Map<String, String> paths = SysctlKeys.resolveAll(conf.sysctl(), req.ifname());
        String ifname = req.ifname();

        try (Netns ns = Namespaces.open(req.netns()); Rtnl rt = Rtnl.open(ns)) {
            for (Map.Entry<String, String> e : conf.sysctl().entrySet()) {
                Path file = Sysctl.path(paths.get(e.getKey()));
                // Not Files.readString: for /proc/sys files (size 0) it returns only the first byte.
                String current;
                try {
                    current = ns.run(() -> {
                        try (InputStream in = Files.newInputStream(file)) {
                            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                        }
                    });
                } catch (IOException ex) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to read sysctl \"" + e.getKey() + "\"", ex.toString(), ex);
                }
                if (current.endsWith("\n")) current = current.substring(0, current.length() - 1);
                if (!current.equals(e.getValue())) {
                    throw failed("Error: Tuning configured value of " + file + " is " + e.getValue() + ", current value is " + current);
                }
            }
            Link link = rt.findLink(ifname).orElseThrow(() -> failed("Cannot find container link " + ifname));
            if (conf.mac() != null && !conf.mac().equals(link.mac())) {
                throw failed("Error: Tuning configured Ethernet of " + ifname + " is " + conf.mac() + ", current value is " + link.mac());
            }
            if (conf.promisc() != link.promisc()) {
                throw failed("Error: Tuning link " + ifname + " configured promisc is " + conf.promisc() + ", current value is "
                        + (link.promisc() ? 1 : 0));
            }
            if (conf.mtu() != 0 && conf.mtu() != link.mtu()) {
                throw failed("Error: Tuning configured MTU of " + ifname + " is " + conf.mtu() + ", current value is " + link.mtu());
            }
            if (conf.allmulti() != null && conf.allmulti() != link.allmulti()) {
                throw failed("Error: Tuning configured all-multicast mode of " + ifname + " is " + conf.allmulti()
                        + ", current value is " + link.allmulti());
            }
            if (conf.txQLen() != null && conf.txQLen() != link.txqlen()) {
                throw failed("Error: Tuning configured Transmit Queue Length of " + ifname + " is " + conf.txQLen()
                        + ", current value is " + link.txqlen());
            }
        }
    }

    private static Result prevResult(PluginRequest req) {
        if (req.prevResult() == null) throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Required prevResult missing");
        return req.prevResult();
    }

    /** prevResult with {@code mac} on every interface named {@code ifname}. */
    static Result withMac(Result r, String ifname, String mac) {
        List<Result.Interface> ifs = new ArrayList<>();
        for (Result.Interface i : r.interfaces()) {
            ifs.add(ifname.equals(i.name()) ? new Result.Interface(i.name(), mac, i.mtu(), i.sandbox(), i.socketPath(), i.pciID()) : i);
        }
        return r.withInterfaces(ifs);
    }

    private static Link link(Rtnl rt, String ifname) {
        try {
            return rt.link(ifname);
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to get \"" + ifname + "\"", e);
        }
    }

    private static void attempt(List<String> errors, String what, Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            errors.add(what + ": " + e.getMessage());
        }
    }

    private static CniException failed(String msg) {
        return new CniException(ErrorCode.INTERNAL, msg);
    }

    private static void removeQuietly(Path file, PrintStream log) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.println("tuning: cannot remove " + file + ": " + e.getMessage());
        }
    }
}
