package io.jcni.plugins.common.link;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ns.Namespaces;
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

    /** For cleanup after a failure: never throws. */
    public static void deleteQuietly(Rtnl rt, String name) {
        try {
            deleteIfExists(rt, name);
        } catch (RuntimeException ignored) {
            // the original error is the one to report
        }
    }
}
