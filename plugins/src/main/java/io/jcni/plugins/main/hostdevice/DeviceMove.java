package io.jcni.plugins.main.hostdevice;

import static io.jcni.plugins.common.Kernel.kernel;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.Kernel;
import io.jcni.types.Cidr;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Moving a device between the host and a container, renamed on the way, without a rename ever
 * being visible on the host (udev and NetworkManager race with host renames, which is why the
 * reference stopped doing them in v1.2). The original name goes into the device's alias, as the
 * reference keeps it, so either plugin can return a device the other took.
 *
 * <p>Straight path, one move each way (what the reference 1.1.1 does): in, the device moves into
 * the container under its host name and is renamed there; out, it is renamed to its host name in
 * the container and moves out. When that name is taken in the container, the device goes through
 * an anonymous scratch namespace holding nothing else, where the rename cannot clash (what the
 * reference does since v1.2 every time). A move costs the kernel tens of milliseconds (an RCU
 * grace period), so the straight path halves the cost of a lifecycle.
 *
 * <p>Moving a device to another namespace takes it down and the kernel drops its addresses and
 * routes; its MTU, MAC and alias travel with it.
 */
final class DeviceMove {
    private DeviceMove() {}

    /**
     * Moves {@code dev} from the host into the container as {@code ifname}, alias set to its host
     * name, and sets it up there. On failure the device is put back on the host under its name.
     *
     * @return the device as the container sees it
     */
    static Link in(Rtnl host, Netns hostNs, Link dev, Netns cont, Rtnl crt, String ifname, PrintStream log) {
        String name = dev.name();
        String alias = dev.alias() == null ? "" : dev.alias();
        try {
            host.setNamespace(dev.index(), cont);
        } catch (ErrnoException e) {
            if (!e.is(Errno.EEXIST)) throw Kernel.failed("failed to move \"" + name + "\" to container NS", e);
            return inViaScratch(host, hostNs, dev, cont, crt, ifname, log); // the container has a device of that name
        }
        int[] index = {-1};
        try {
            Link c = kernel("failed to find \"" + name + "\" in container NS", () -> crt.link(name));
            index[0] = c.index();
            if (!name.equals(ifname)) {
                kernel("failed to rename host device \"" + name + "\" to \"" + ifname + "\"", () -> crt.rename(c.index(), ifname));
            }
            kernel("failed to set alias to \"" + name + "\"", () -> crt.setAlias(c.index(), name));
            kernel("failed to set \"" + ifname + "\" up", () -> crt.setUp(c.index()));
            return crt.link(c.index());
        } catch (RuntimeException e) {
            try {
                if (index[0] > 0) {
                    crt.setDown(index[0]);
                    if (!crt.link(index[0]).name().equals(name)) crt.rename(index[0], name);
                    crt.setAlias(index[0], alias);
                    crt.setNamespace(index[0], hostNs);
                }
            } catch (RuntimeException again) {
                log.println("host-device: returning \"" + name + "\" to the host after a failed ADD failed: " + again.getMessage());
            }
            throw e;
        }
    }

    private static Link inViaScratch(Rtnl host, Netns hostNs, Link dev, Netns cont, Rtnl crt, String ifname, PrintStream log) {
        String name = dev.name();
        try (Netns tmp = Netns.createAnonymous(); Rtnl trt = Rtnl.open(tmp)) {
            kernel("failed to move \"" + name + "\" to tempNS", () -> host.setNamespace(dev.index(), tmp));
            try {
                Link t = kernel("failed to find \"" + name + "\" in tempNS", () -> trt.link(name));
                kernel("failed to rename host device \"" + name + "\" to \"" + ifname + "\"", () -> trt.rename(t.index(), ifname));
                kernel("failed to set alias to \"" + name + "\"", () -> trt.setAlias(t.index(), name));
                kernel("failed to move \"" + ifname + "\" (host: \"" + name + "\") to container NS", () -> trt.setNamespace(t.index(), cont));
            } catch (RuntimeException e) {
                returnFromScratch(trt, name, dev.alias() == null ? "" : dev.alias(), hostNs, log);
                throw e;
            }
            try {
                Link c = kernel("failed to find \"" + ifname + "\" in container NS", () -> crt.link(ifname));
                kernel("failed to set \"" + ifname + "\" up", () -> crt.setUp(c.index()));
                return crt.link(ifname);
            } catch (RuntimeException e) {
                try {
                    crt.findLink(ifname).ifPresent(c -> crt.setNamespace(c.index(), tmp));
                    returnFromScratch(trt, name, dev.alias() == null ? "" : dev.alias(), hostNs, log);
                } catch (RuntimeException again) {
                    log.println("host-device: returning \"" + name + "\" to the host after a failed ADD failed: " + again.getMessage());
                }
                throw e;
            }
        }
    }

    /**
     * Moves the container's {@code dev} (named {@code ifname} there) back to the host as
     * {@code name} with alias {@code alias}. On failure it is put back into the container under
     * {@code ifname}, so a retried DEL finds it again.
     */
    static void out(Netns cont, Rtnl crt, Link dev, String ifname, String name, String alias, Netns hostNs, PrintStream log) {
        if (!name.equals(ifname) && crt.findLink(name).isPresent()) {
            outViaScratch(cont, crt, dev, ifname, name, alias, hostNs, log); // the container has a device of that name
            return;
        }
        int index = dev.index();
        kernel("failed to set \"" + ifname + "\" down", () -> crt.setDown(index));
        try {
            if (!name.equals(ifname)) {
                kernel("failed to restore \"" + ifname + "\" to original name \"" + name + "\"", () -> crt.rename(index, name));
            }
            kernel("failed to reset the alias of \"" + name + "\"", () -> crt.setAlias(index, alias));
            kernel("failed to move \"" + name + "\" to hostNS", () -> crt.setNamespace(index, hostNs));
        } catch (RuntimeException e) {
            // Leave it as DEL found it, so that a retry finds it again.
            try {
                if (!crt.link(index).name().equals(ifname)) crt.rename(index, ifname);
                crt.setAlias(index, name);
                if (dev.up()) crt.setUp(index);
            } catch (RuntimeException again) {
                log.println("host-device: putting \"" + ifname + "\" back as it was after a failed DEL failed: " + again.getMessage());
            }
            throw e;
        }
    }

    private static void outViaScratch(Netns cont, Rtnl crt, Link dev, String ifname, String name, String alias, Netns hostNs,
                                      PrintStream log) {
        try (Netns tmp = Netns.createAnonymous(); Rtnl trt = Rtnl.open(tmp)) {
            kernel("failed to move \"" + ifname + "\" to tempNS", () -> crt.setNamespace(dev.index(), tmp));
            try {
                Link t = kernel("failed to find \"" + ifname + "\" in tempNS", () -> trt.link(ifname));
                kernel("failed to rename device \"" + ifname + "\" to \"" + name + "\"", () -> trt.rename(t.index(), name));
                kernel("failed to reset the alias of \"" + name + "\"", () -> trt.setAlias(t.index(), alias));
                kernel("failed to move \"" + name + "\" to hostNS", () -> trt.setNamespace(t.index(), hostNs));
            } catch (RuntimeException e) {
                try {
                    Link t = onlyDevice(trt);
                    if (!t.name().equals(ifname)) trt.rename(t.index(), ifname);
                    trt.setAlias(t.index(), name);
                    trt.setNamespace(t.index(), cont);
                    if (dev.up()) crt.setUp(crt.link(ifname).index());
                } catch (RuntimeException again) {
                    log.println("host-device: putting \"" + ifname + "\" back into the container after a failed DEL failed: "
                            + again.getMessage());
                }
                throw e;
            }
        }
    }

    /** After a failed ADD: the device (alone in the scratch namespace) goes home as it was. */
    private static void returnFromScratch(Rtnl trt, String name, String alias, Netns hostNs, PrintStream log) {
        try {
            Link t = onlyDevice(trt);
            if (!t.name().equals(name)) trt.rename(t.index(), name);
            trt.setAlias(t.index(), alias);
            trt.setNamespace(t.index(), hostNs);
        } catch (RuntimeException e) {
            log.println("host-device: returning \"" + name + "\" to the host after a failed ADD failed: " + e.getMessage());
        }
    }

    /** The scratch namespace's one device besides lo. */
    private static Link onlyDevice(Rtnl trt) {
        for (Link l : trt.links()) if (!l.loopback()) return l;
        throw new CniException(ErrorCode.INTERNAL, "the device is not in the scratch namespace any more");
    }

    /**
     * A device the kernel (or an earlier, interrupted DEL) left in the host namespace under another
     * name: renames it (down first, as a running device cannot be renamed) and resets its alias.
     */
    static Link rehome(Rtnl host, Link dev, String name, String alias) {
        if (!dev.name().equals(name)) {
            kernel("failed to set \"" + dev.name() + "\" down", () -> host.setDown(dev.index()));
            kernel("failed to rename device \"" + dev.name() + "\" to \"" + name + "\"", () -> host.rename(dev.index(), name));
        }
        kernel("failed to reset the alias of \"" + name + "\"", () -> host.setAlias(dev.index(), alias));
        return host.link(dev.index());
    }

    /** The permanent addresses ADD saves (the kernel makes IPv6 link-local ones again by itself). */
    static List<Cidr> savedAddresses(Rtnl host, int index) {
        List<Cidr> out = new ArrayList<>();
        for (Address a : host.addresses(index, Family.ALL)) {
            if ((a.flags() & Address.IFA_F_PERMANENT) == 0) continue;
            if (a.address().isV6() && a.address().isLinkLocalUnicast()) continue;
            out.add(new Cidr(a.address(), a.prefixLength()));
        }
        return out;
    }

    /** Puts back on the host device {@code name} the MTU, addresses and up state saved at ADD. */
    static void restore(Rtnl host, String name, SavedDevice saved) {
        Link dev = kernel("failed to find \"" + name + "\" on the host", () -> host.link(name));
        if (saved.mtu() > 0 && dev.mtu() != saved.mtu()) {
            kernel("failed to restore the MTU " + saved.mtu() + " of \"" + name + "\"", () -> host.setMtu(dev.index(), saved.mtu()));
        }
        for (Cidr c : saved.addresses()) {
            try {
                host.addAddress(dev.index(), c.address(), c.prefix(), false);
            } catch (ErrnoException e) {
                if (!e.is(Errno.EEXIST)) throw Kernel.failed("failed to restore address " + c + " on \"" + name + "\"", e);
            }
        }
        if (saved.up()) kernel("failed to set \"" + name + "\" up", () -> host.setUp(dev.index()));
    }
}
