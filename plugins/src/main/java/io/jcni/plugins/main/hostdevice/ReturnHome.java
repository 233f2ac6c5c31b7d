package io.jcni.plugins.main.hostdevice;

import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Giving an attachment's device back to the host (DEL, GC), wherever it is now.
 *
 * <ul>
 *   <li>In the container under CNI_IFNAME: moved out under the name in its alias (the reference's
 *       convention, so devices the reference took come back too) and given its saved state.</li>
 *   <li>Not there, because the container's namespace was destroyed with the device inside. The kernel
 *       (default_device_exit_net) then treats devices by kind: a physical one (no rtnl_link_ops, or
 *       netns_refund such as dsa) is moved to the <em>initial</em> namespace, keeping its alias, under
 *       its container name or, if that is taken there, {@code dev<ifindex>}; a virtual one (veth,
 *       macvlan, ...) is deleted. So jcni looks in the host namespace for a device with the saved MAC
 *       and the original name as alias, renames it back and restores it. When it is not there, DEL
 *       still succeeds (nothing a retry could change) but says on stderr what happened to it: lost
 *       with its namespace (virtual), or in the initial namespace if the host is another one.</li>
 *   <li>Already home (an earlier DEL was interrupted after the move): restored again.</li>
 * </ul>
 * The saved state is deleted last, so an interrupted DEL is finished by the next one.
 */
final class ReturnHome {
    /** How long to wait for the kernel's asynchronous namespace cleanup to hand back a physical device. */
    static final long REFUND_WAIT_MILLIS = 1_000;

    private final PrintStream log;

    private ReturnHome(PrintStream log) {
        this.log = log;
    }

    static ReturnHome of(PrintStream log) {
        return new ReturnHome(log);
    }

    void attachment(Path dataDir, String network, String containerId, String ifname, String netnsPath) {
        Path file = SavedDevice.file(dataDir, network, containerId, ifname);
        SavedDevice saved;
        try {
            saved = SavedDevice.load(file);
        } catch (CniException e) {
            log.println("host-device: " + e.getMessage() + "; returning the device by its alias only");
            saved = null;
        }
        // A DEL without CNI_NETNS (containerd's Remove of a sandbox whose netns it no longer knows)
        // still finds the device through the netns ADD saw, if it lives on.
        boolean savedPath = (netnsPath == null || netnsPath.isEmpty()) && saved != null && !saved.netns().isEmpty();
        String ns = savedPath ? saved.netns() : netnsPath;
        try (Netns hostNs = Netns.current(); Rtnl host = Rtnl.open()) {
            if (!fromContainer(ns, savedPath, ifname, saved, hostNs, host) && saved != null) fromHost(saved, ns, host);
        }
        SavedDevice.delete(file);
    }

    /**
     * Returns the device if the container still holds it; false when it does not.
     *
     * @param savedPath the path comes from the saved state, not the runtime: the namespace mounted
     *     there now may be another one, so only a device that carries the saved name as alias is taken
     */
    private boolean fromContainer(String netnsPath, boolean savedPath, String ifname, SavedDevice saved, Netns hostNs, Rtnl host) {
        if (netnsPath == null || netnsPath.isEmpty()) return false;
        Netns cont;
        try {
            cont = Namespaces.openIfExists(netnsPath);
        } catch (CniException e) {
            if (!savedPath) throw e;
            return false;
        }
        if (cont == null) return false;
        try (cont; Rtnl crt = Rtnl.open(cont)) {
            Optional<Link> found = crt.findLink(ifname);
            if (found.isEmpty()) return false;
            Link dev = found.get();
            if (savedPath && !saved.name().equals(dev.alias())) return false;
            String name = dev.alias() == null ? "" : dev.alias();
            SavedDevice state = saved;
            if (name.isEmpty()) {
                if (saved == null || !saved.mac().equals(String.valueOf(dev.mac()))) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to find original ifname for \"" + ifname + "\" (alias is not set)");
                }
                name = saved.name();
            } else if (saved != null && !saved.name().equals(name)) {
                log.println("host-device: \"" + ifname + "\" came from \"" + name + "\" but the saved state is of \"" + saved.name()
                        + "\"; returning it under its alias without the saved state");
                state = null;
            }
            DeviceMove.out(cont, crt, dev, ifname, name, state == null ? "" : state.alias(), hostNs, log);
            if (state != null) DeviceMove.restore(host, name, state);
            return true;
        }
    }

    /** The container no longer holds the device: find it on the host, or say where it went. */
    private void fromHost(SavedDevice saved, String netnsPath, Rtnl host) {
        Link dev = findOnHost(host, saved);
        if (dev == null && saved.kind() == null) {
            // Namespace cleanup runs in a kernel work queue: a physical device may arrive a moment later.
            long deadline = System.nanoTime() + REFUND_WAIT_MILLIS * 1_000_000;
            while (dev == null && System.nanoTime() < deadline && sleep()) {
                dev = findOnHost(host, saved);
            }
        }
        if (dev == null) {
            log.println(lostMessage(saved, netnsPath, netnsPath.isEmpty() || !Files.exists(Path.of(netnsPath))));
            return;
        }
        if (!dev.name().equals(saved.name())) {
            log.println("host-device: \"" + saved.name() + "\" of " + saved.containerId() + "/" + saved.ifname()
                    + " was on the host as \"" + dev.name() + "\" (its container netns " + netnsPath
                    + " is gone: the kernel returns a physical device to the initial namespace); renaming it back");
        }
        if (!dev.name().equals(saved.name()) || saved.name().equals(dev.alias())) {
            // Renamed by the kernel, or returned by a DEL that left the alias (the reference 1.1.1's).
            DeviceMove.rehome(host, dev, saved.name(), saved.alias());
        }
        DeviceMove.restore(host, saved.name(), saved);
    }

    /**
     * The saved device on the host: its MAC, or the container's name (or the kernel's dev%d) when a
     * chained plugin changed the MAC, together with its original name as alias; or its MAC under its
     * original name (already renamed back).
     */
    static Link findOnHost(Rtnl host, SavedDevice saved) {
        for (Link l : host.links()) {
            boolean sameMac = saved.mac().equals(String.valueOf(l.mac()));
            boolean aliased = saved.name().equals(l.alias());
            boolean containerName = l.name().equals(saved.ifname()) || l.name().matches("dev[0-9]+");
            if (aliased && (sameMac || containerName)) return l;
            if (sameMac && l.name().equals(saved.name())) return l;
        }
        return null;
    }

    static String lostMessage(SavedDevice saved, String netnsPath, boolean nsGone) {
        String what = "host-device: device \"" + saved.name() + "\" (MAC " + saved.mac() + ") of attachment " + saved.containerId()
                + "/" + saved.ifname() + " cannot be returned: ";
        if (!nsGone) {
            return what + "it is neither in its container netns " + netnsPath + " as \"" + saved.ifname()
                    + "\" nor in this namespace; something else moved or deleted it.";
        }
        what += "its container netns " + (netnsPath.isEmpty() ? "(unknown)" : netnsPath) + " is gone and the device is not in this namespace. ";
        if (saved.kind() != null) {
            return what + "It was a virtual device (kind " + saved.kind() + "), which the kernel deletes together with its namespace: it no longer exists.";
        }
        return what + "The kernel moves a physical device to the initial network namespace when its namespace is destroyed, named \""
                + saved.ifname() + "\" or dev<ifindex>, with alias \"" + saved.name() + "\"; if this plugin runs in another namespace, "
                + "return it from the initial one: ip link set dev <that name> down; ip link set dev <that name> name " + saved.name();
    }

    private static boolean sleep() {
        try {
            Thread.sleep(50);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
