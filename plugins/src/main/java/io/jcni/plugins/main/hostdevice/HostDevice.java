package io.jcni.plugins.main.hostdevice;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.NetConfs;
import io.jcni.plugins.common.Undo;
import io.jcni.plugins.common.ip.Iface;
import io.jcni.plugins.common.ipam.Ipam;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code host-device} plugin: moves an existing host interface into the container under
 * CNI_IFNAME, and back on DEL (see the README next to this class). Config and result as the
 * reference's; the device is named by {@code device}, {@code hwaddr}, {@code kernelpath},
 * {@code pciBusID} or the {@code deviceID} runtimeConfig ({@link HostDeviceConf}).
 *
 * <p>ADD saves the device's host state ({@link SavedDevice}), moves it in ({@link DeviceMove#in}),
 * then runs IPAM if configured: every address goes on the moved interface (index 0), and the
 * config's {@code dns} replaces the IPAM's. Without IPAM the result is the interface alone.
 *
 * <p>DEL releases the addresses, then returns the device under its original name (from its alias)
 * with its saved alias, MTU, addresses and up state; the reference leaves it down and bare. A
 * missing device, namespace or CNI_NETNS is success; if the namespace died with the device inside,
 * DEL looks for it where the kernel puts it and says on stderr when it cannot be had back
 * ({@link ReturnHome}). GC does the same for attachments the runtime no longer lists; STATUS is the
 * IPAM plugin's.
 */
public final class HostDevice implements Plugin {
    private final Sysfs sysfs;

    public HostDevice() {
        this(Sysfs.REAL);
    }

    HostDevice(Sysfs sysfs) {
        this.sysfs = sysfs;
    }

    private HostDeviceConf conf(PluginRequest req, boolean lenient) {
        return HostDeviceConf.parse(req.conf(), req.runtimeConfig(), sysfs, lenient, req.log());
    }

    @Override
    public Result add(PluginRequest req) throws Exception {
        HostDeviceConf conf = conf(req, false);
        Result.Dns dns = NetConfs.dns(req.conf());
        Ipam ipam = Ipam.of(req);
        if (ipam == null && req.version().hasLegacyResult()) {
            // The reference fails the same way, but only after moving the device, which it leaves in the container.
            throw new CniException(ErrorCode.INTERNAL, "cannot convert: no valid IP addresses",
                    "a " + req.version() + " result holds only addresses; without ipam there are none");
        }
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont); Netns hostNs = Netns.current();
             Rtnl host = Rtnl.open(); Undo undo = new Undo(req.log())) {
            Result.Interface iface;
            if (conf.dpdk()) {
                // A userspace driver owns the device: there is no kernel interface to move.
                iface = new Result.Interface(req.ifname(), null, req.netns());
            } else {
                iface = moveIn(req, conf, hostNs, host, cont, crt, undo);
            }
            Result result;
            if (ipam == null) {
                result = new Result(req.version().toString(), List.of(iface), List.of(), List.of(), null);
            } else {
                result = ipam.add(req);
                undo.add("IPAM cleanup", () -> ipam.del(req));
                List<Result.IpConfig> ips = new ArrayList<>();
                for (Result.IpConfig ipc : result.ips()) ips.add(new Result.IpConfig(ipc.address(), ipc.gateway(), 0));
                result = result.withIps(ips).withInterfaces(List.of(iface));
                if (!conf.dpdk()) Iface.configure(cont, crt, req.ifname(), result, req.log());
                result = result.withDns(dns == null ? Result.Dns.EMPTY : dns);
            }
            undo.commit();
            return result;
        }
    }

    private Result.Interface moveIn(PluginRequest req, HostDeviceConf conf, Netns hostNs, Rtnl host, Netns cont, Rtnl crt,
                                    Undo undo) {
        Link dev = DeviceLookup.find(host, conf, sysfs);
        SavedDevice saved = new SavedDevice(req.networkName(), req.containerId(), req.ifname(), req.netns(), dev.name(),
                dev.alias() == null ? "" : dev.alias(), dev.mac() == null ? "" : dev.mac().toString(), dev.kind(), dev.up(),
                dev.mtu(), DeviceMove.savedAddresses(host, dev.index()));
        Path file = saved.file(conf.dataDir());
        saved.save(conf.dataDir());
        undo.add("deleting " + file, () -> SavedDevice.delete(file));
        // Registered before the move: a failed move leaves the device on the host, down and bare.
        undo.add("restoring \"" + dev.name() + "\" on the host", () -> DeviceMove.restore(host, dev.name(), saved));
        Link moved = DeviceMove.in(host, hostNs, dev, cont, crt, req.ifname(), req.log());
        undo.add("returning \"" + dev.name() + "\" to the host", () -> crt.findLink(req.ifname()).ifPresent(l ->
                DeviceMove.out(cont, crt, l, req.ifname(), saved.name(), saved.alias(), hostNs, req.log())));
        return new Result.Interface(moved.name(), moved.mac() == null ? "" : moved.mac().toString(), req.netns());
    }

    @Override
    public void del(PluginRequest req) throws Exception {
        HostDeviceConf conf = conf(req, true);
        Ipam ipam = Ipam.of(req);
        if (ipam != null) ipam.del(req);
        if (conf.dpdk()) return;
        ReturnHome.of(req.log()).attachment(conf.dataDir(), req.networkName(), req.containerId(), req.ifname(), req.netns());
    }

    @Override
    public void check(PluginRequest req) throws Exception {
        HostDeviceConf conf = conf(req, false);
        Ipam ipam = Ipam.of(req);
        try (Netns cont = Namespaces.open(req.netns()); Rtnl crt = Rtnl.open(cont)) {
            if (ipam != null) ipam.check(req);
            if (req.prevResult() == null) {
                throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "Required prevResult missing");
            }
            Result result = req.prevResult();
            if (conf.dpdk()) return;
            Result.Interface contMap = null;
            for (Result.Interface i : result.interfaces()) {
                if (req.ifname().equals(i.name()) && req.netns().equals(i.sandbox())) contMap = i;
            }
            String sandbox = contMap == null || contMap.sandbox() == null ? "" : contMap.sandbox();
            if (!req.netns().equals(sandbox)) {
                throw new CniException(ErrorCode.INTERNAL, "Sandbox in prevResult " + sandbox + " doesn't match configured netns: " + req.netns());
            }
            Result.Interface want = contMap;
            Link l = crt.findLink(want.name()).orElseThrow(() -> new CniException(ErrorCode.INTERNAL,
                    "Container Interface name in prevResult: " + want.name() + " not found"));
            if (want.mac() != null && !want.mac().isEmpty() && !want.mac().equals(String.valueOf(l.mac()))) {
                throw new CniException(ErrorCode.INTERNAL, "Interface " + want.name() + " Mac " + want.mac()
                        + " doesn't match container Mac: " + l.mac());
            }
            Iface.validateIps(crt, req.ifname(), result.ips());
            Iface.validateRoutes(crt, result.routes());
        }
    }

    /**
     * Returns the devices of attachments the runtime no longer lists (a container whose DEL never
     * came), then runs the IPAM plugin's GC with the same list.
     */
    @Override
    public void gc(PluginRequest req) {
        Path dataDir = HostDeviceConf.dataDir(req.conf());
        Set<Attachment> valid = new HashSet<>(req.validAttachments());
        ReturnHome home = ReturnHome.of(req.log());
        for (Path f : SavedDevice.filesOf(dataDir, req.networkName())) {
            SavedDevice s;
            try {
                s = SavedDevice.load(f);
            } catch (CniException e) {
                req.log().println("host-device GC: skipping " + f + ": " + e.getMessage());
                continue;
            }
            if (s == null || valid.contains(new Attachment(s.containerId(), s.ifname()))) continue;
            try {
                home.attachment(dataDir, s.network(), s.containerId(), s.ifname(), s.netns());
            } catch (RuntimeException e) {
                req.log().println("host-device GC: could not return \"" + s.name() + "\" of " + s.containerId() + "/" + s.ifname()
                        + ": " + e.getMessage());
            }
        }
        Ipam ipam = Ipam.of(req);
        if (ipam != null) ipam.gc(req);
    }

    @Override
    public void status(PluginRequest req) {
        Ipam.statusOf(req);
    }

    /** Finding the configured device among the host's links. */
    static final class DeviceLookup {
        private DeviceLookup() {}

        static Link find(Rtnl host, HostDeviceConf conf, Sysfs sysfs) {
            if (!conf.device().isEmpty()) return host.findLink(conf.device()).orElseThrow(DeviceLookup::linkNotFound);
            if (conf.hwaddr() != null) {
                for (Link l : host.links()) {
                    if (l.mac() != null && Arrays.equals(l.mac().bytes(), conf.hwaddr())) return l;
                }
                throw new CniException(ErrorCode.INTERNAL, "failed to find host device: failed to find physical interface",
                        "no link has hwaddr " + conf.hwaddrText());
            }
            List<String> names;
            if (!conf.kernelPath().isEmpty()) names = sysfs.kernelPathNetDevices(conf.kernelPath());
            else if (!conf.pciBusId().isEmpty()) names = sysfs.pciNetDevices(conf.pciBusId());
            else names = sysfs.auxNetDevices(conf.auxDevice());
            for (String n : names) {
                Optional<Link> l = host.findLink(n);
                if (l.isPresent()) return l.get();
            }
            throw new CniException(ErrorCode.INTERNAL, "failed to find host device: Link not found",
                    "sysfs names " + names + ", none of which is a link in this namespace");
        }

        private static CniException linkNotFound() {
            return new CniException(ErrorCode.INTERNAL, "failed to find host device: Link not found");
        }
    }
}
