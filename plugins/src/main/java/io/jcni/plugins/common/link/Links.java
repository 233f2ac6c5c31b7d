package io.jcni.plugins.common.link;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Background;
import io.jcni.plugins.skel.Phases.Phase;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.spec.CniException;
import io.jcni.spec.ErrorCode;
import java.util.Optional;

/** Link helpers that treat "already gone" as success, for DEL and cleanup paths. */
public final class Links {
    private Links() {}

    /** Deletes the link if it exists; true when it did. */
    public static boolean deleteIfExists(Rtnl rt, String name) {
        Optional<Link> link = rt.findLink(name);
        if (link.isEmpty()) return false;
        try {
            rt.deleteLink(link.get().index());
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return false; // raced with another DEL
            throw e;
        }
        return true;
    }

    /**
     * DEL of an interface plugin: deletes CNI_IFNAME in the container (its veth peer goes with it);
     * no namespace, a namespace that is gone or no such interface is success.
     */
    public static void deleteContainerIface(PluginRequest req) {
        if (req.netns().isEmpty()) return;
        Phase outer = req.phases().enter(Phase.NETNS);
        try {
            Netns cont = Namespaces.openIfExists(req.netns());
            if (cont == null) return;
            try (cont; Rtnl crt = Rtnl.open(cont)) {
                req.phases().enter(Phase.LINK_DELETE);
                deleteIfExists(crt, req.ifname());
                req.phases().enter(Phase.NETNS);
            } catch (ErrnoException e) {
                throw new CniException(ErrorCode.INTERNAL, "failed to delete \"" + req.ifname() + "\"", e);
            }
        } finally {
            req.phases().enter(outer);
        }
    }

    /**
     * DEL of a bridge port: as {@link #deleteContainerIface}, but when the caller can finish work
     * after the answer (jcnid), the slow part goes there. Deleting a veth costs ~20 ms of the
     * kernel's time (RCU grace periods in the unregistration), three quarters of a bridge DEL,
     * while taking it down, removing its addresses and renaming it costs well under 1 ms
     * (bench/link-delete). So DEL does the second now, which is all DEL promises: the addresses are
     * gone (routes through it go with them and with the link's carrier), the host end is down,
     * CNI_IFNAME is free for the next ADD; the deletion itself runs in the background, holding the
     * namespace open until it is done. If the daemon dies first, the retired pair goes with the
     * container's namespace.
     *
     * <p>Only for links whose host end has no addresses or routes of its own (a bridge port): a
     * ptp host end keeps its route to the container's address until the deletion.
     */
    public static void retireContainerIface(PluginRequest req) {
        if (req.context().background() == null || req.netns().isEmpty()) {
            deleteContainerIface(req);
            return;
        }
        Phase outer = req.phases().enter(Phase.NETNS);
        Netns cont = null;
        Rtnl crt = null;
        try {
            cont = Namespaces.openIfExists(req.netns());
            if (cont == null) return;
            crt = Rtnl.open(cont);
            req.phases().enter(Phase.LINK_DELETE);
            Optional<Link> link = crt.findLink(req.ifname());
            if (link.isEmpty()) return;
            if (retireLater(req, crt, link.get().index(), cont)) {
                cont = null; // the deletion owns them now
                crt = null;
            } else {
                deleteIfExists(crt, req.ifname());
            }
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to delete \"" + req.ifname() + "\"", e);
        } finally {
            if (crt != null) crt.close();
            if (cont != null) cont.close();
            req.phases().enter(outer);
        }
    }

    /**
     * Retires link {@code index} of {@code rt} (down, no addresses, renamed to {@link #retiredName})
     * and hands its deletion to the call's {@link Background}, which then owns {@code rt} and
     * {@code ns} (may be null) and closes them. False, owning nothing, when there is no background
     * or the link could not be retired (gone meanwhile, name taken): the caller deletes it now.
     */
    public static boolean retireLater(PluginRequest req, Rtnl rt, int index, Netns ns) {
        Background background = req.context().background();
        if (background == null || !retire(rt, index)) return false;
        Runnable delete = () -> deleteRetired(ns, rt, index);
        if (!background.submit("deleting retired link " + index + (ns == null ? "" : " in " + req.netns()), delete)) {
            delete.run(); // shutting down: now, and still ours to close
        }
        return true;
    }

    /** The name a retired link has until it is deleted: unique in its namespace, as its index is. */
    public static String retiredName(int index) {
        return "jcnidel" + Integer.toHexString(index);
    }

    /**
     * Down, without addresses, renamed out of CNI_IFNAME's way; false when it vanished meanwhile
     * (another DEL) or the name is taken, and the caller should just delete it.
     */
    private static boolean retire(Rtnl rt, int index) {
        try {
            rt.setDown(index);
            for (Family f : Family.values()) {
                for (Address a : rt.addresses(index, f)) {
                    try {
                        rt.deleteAddress(index, a.address(), a.prefixLength());
                    } catch (ErrnoException e) {
                        if (!e.is(Errno.EADDRNOTAVAIL)) throw e; // gone with the link going down (IPv6)
                    }
                }
            }
            rt.rename(index, retiredName(index));
            return true;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV) || e.is(Errno.EEXIST)) return false;
            throw e;
        }
    }

    private static void deleteRetired(Netns ns, Rtnl rt, int index) {
        try (rt) {
            rt.deleteLink(index);
        } catch (ErrnoException e) {
            if (!e.is(Errno.ENODEV)) throw e; // gone with its namespace, or its peer's
        } finally {
            if (ns != null) ns.close();
        }
    }

    /** Whether the link is one a DEL retired and has not deleted yet (a daemon that died left it). */
    public static boolean isRetired(Link l) {
        return l.name().equals(retiredName(l.index()));
    }

    /** For cleanup after a failure: never throws. */
    public static void deleteQuietly(Rtnl rt, String name) {
        try {
            deleteIfExists(rt, name);
        } catch (RuntimeException ignored) {
            // the original error is the one to report
        }
    }
}
