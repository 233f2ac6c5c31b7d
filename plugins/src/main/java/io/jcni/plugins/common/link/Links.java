package io.jcni.plugins.common.link;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ns.Namespaces;
import io.jcni.plugins.skel.Phases.Phase;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
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

    /** The device group retired links wait in until one request deletes them all (IFLA_GROUP; "jcni"). */
    public static final int RETIRED_GROUP = 0x6a636e69;
    /**
     * How long retired links wait: long enough for the runtime to delete the container's namespace
     * after DEL, which takes the veth with it in the kernel's own batched teardown, for nothing.
     */
    static final long SWEEP_DELAY_MILLIS = 500;

    /**
     * DEL of a bridge port: as {@link #deleteContainerIface}, but when the caller can finish work
     * after the answer (jcnid), the kernel's slow part is not DEL's. Deleting a veth costs ~20 ms of
     * RCU grace periods, most of a bridge DEL, and holds the rtnl lock meanwhile; taking it down,
     * removing its addresses and renaming it costs well under 1 ms (bench/link-delete). So DEL does
     * the second, which is all DEL promises: the addresses are gone (routes through it go with them
     * and with the carrier), CNI_IFNAME is free for the next ADD, the host end is down. The pair is
     * then left to the container namespace's teardown (the runtime deletes it right after DEL; the
     * kernel unregisters its devices in one batch), and what is still there after a moment is deleted
     * by one request for all retired links of the host namespace: the host ends wait in device
     * group {@link #RETIRED_GROUP}.
     *
     * <p>Only for links whose host end has no addresses or routes of its own (a bridge port): a
     * ptp host end keeps its route to the container's address until the deletion.
     */
    public static void retireContainerIface(PluginRequest req) {
        if (req.context().background() == null || req.netns().isEmpty()) {
            deleteContainerIface(req);
            if (req.context().background() == null) sweepLeftovers(req);
            return;
        }
        Phase outer = req.phases().enter(Phase.NETNS);
        try {
            Netns cont = Namespaces.openIfExists(req.netns());
            if (cont == null) return;
            try (cont; Rtnl crt = Rtnl.open(cont); Rtnl host = Rtnl.open()) {
                req.phases().enter(Phase.LINK_DELETE);
                Optional<Link> link = crt.findLink(req.ifname());
                if (link.isEmpty()) return;
                int peer = hostPeer(host, link.get());
                if (peer < 0 || !retire(crt, link.get().index()) || !joinRetired(host, peer)) {
                    deleteIfExists(crt, req.ifname());
                    return;
                }
                scheduleSweep(req);
            } catch (ErrnoException e) {
                throw new CniException(ErrorCode.INTERNAL, "failed to delete \"" + req.ifname() + "\"", e);
            }
        } finally {
            req.phases().enter(outer);
        }
    }

    /**
     * Retires link {@code index} of {@code rt}, a socket in the caller's namespace (down, no
     * addresses, renamed to {@link #retiredName}, in {@link #RETIRED_GROUP}) and leaves its deletion
     * to the call's {@link Background}. False when there is no background or the link could not be
     * retired (gone meanwhile, name taken): the caller deletes it now.
     */
    public static boolean retireLater(PluginRequest req, Rtnl rt, int index) {
        if (req.context().background() == null || !retire(rt, index) || !joinRetired(rt, index)) return false;
        scheduleSweep(req);
        return true;
    }

    /** The index of a veth's peer in {@code host}, or -1 when it is not a veth whose peer is there. */
    private static int hostPeer(Rtnl host, Link l) {
        if (!"veth".equals(l.kind()) || l.linkIndex() <= 0) return -1;
        try {
            Link p = host.link(l.linkIndex());
            return "veth".equals(p.kind()) && p.linkIndex() == l.index() ? p.index() : -1;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return -1;
            throw e;
        }
    }

    private static boolean joinRetired(Rtnl rt, int index) {
        try {
            rt.setGroup(index, RETIRED_GROUP);
            return true;
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return false;
            throw e;
        }
    }

    /**
     * One deletion of every retired link of the caller's namespace, a moment from now; calls that
     * retire links meanwhile share it.
     */
    private static void scheduleSweep(PluginRequest req) {
        if (!req.context().background().deleteLinkGroupLater(RETIRED_GROUP, SWEEP_DELAY_MILLIS)) sweep(Rtnl.open());
    }

    /**
     * A DEL with nobody to finish its work later (a standalone plugin, e.g. the shim's fallback when
     * jcnid is gone) also deletes what a jcnid killed before its sweep left retired in this
     * namespace: one request, answered ENODEV at once when there is nothing.
     */
    private static void sweepLeftovers(PluginRequest req) {
        Phase outer = req.phases().enter(Phase.LINK_DELETE);
        try {
            sweep(Rtnl.open());
        } catch (ErrnoException e) {
            req.log().println("deleting retired links left by an earlier DEL: " + e.getMessage()); // the DEL itself is done
        } finally {
            req.phases().enter(outer);
        }
    }

    /** Deletes the retired links of {@code rt}'s namespace, if any are left; closes {@code rt}. */
    public static void sweep(Rtnl rt) {
        try (rt) {
            rt.deleteGroup(RETIRED_GROUP);
        } catch (ErrnoException e) {
            if (!e.is(Errno.ENODEV)) throw e; // none left: their namespaces took them
        }
    }

    /** The name a retired link has until it is deleted: unique in its namespace, as its index is. */
    public static String retiredName(int index) {
        return "jcnidel".concat(Integer.toHexString(index)); // not +: a string concatenation is linked at run time
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
