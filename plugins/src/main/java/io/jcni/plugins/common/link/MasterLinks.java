package io.jcni.plugins.common.link;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Result;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What macvlan, ipvlan and vlan share: a container interface stacked on a "master" link, which is
 * a host link, or with {@code linkInContainer} a link already inside the container.
 *
 * <p>The link is created under a temporary name, directly in the container (RTM_NEWLINK with
 * IFLA_NET_NS_FD from the host, or sent inside the container when the master is there), then
 * renamed to CNI_IFNAME there: as the reference plugins do, so that a host link of the same name
 * can never clash with it. A kernel without the kind's driver answers EOPNOTSUPP; that becomes
 * {@link #missingDriver}, an error that says so.
 */
public final class MasterLinks {
    private static final int ATTEMPTS = 10;

    private MasterLinks() {}

    /** Where the master is: the host netns ({@code host}) or the container's ({@code linkInContainer}). */
    public static Rtnl masterSide(Rtnl host, Rtnl container, boolean linkInContainer) {
        return linkInContainer ? container : host;
    }

    /**
     * The interface of the first default route in the main table, IPv4 before IPv6, as the
     * reference's getDefaultRouteInterfaceName picks it.
     */
    public static String defaultRouteInterface(Rtnl rt) {
        try {
            for (Route r : rt.routes(Family.ALL, Route.TABLE_MAIN)) {
                if (r.dst() == null || r.dst().prefix() == 0) {
                    if (r.oif() <= 0) continue; // a multipath route names no single interface
                    return rt.link(r.oif()).name();
                }
            }
        } catch (ErrnoException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to find the default route interface", e);
        }
        throw new CniException(ErrorCode.INTERNAL, "no default route interface found");
    }

    /** The master link; a missing one is "failed to lookup master". */
    public static Link master(Rtnl rt, String name) {
        try {
            return rt.link(name);
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) throw new CniException(ErrorCode.INTERNAL, "failed to lookup master \"" + name + "\": Link not found", e);
            throw new CniException(ErrorCode.INTERNAL, "failed to lookup master \"" + name + "\"", e);
        }
    }

    /** The reference's MTU rule: 0 (the kernel's default) up to the master's MTU. */
    public static void checkMtu(long mtu, Link master) {
        if (mtu < 0 || mtu > master.mtu()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid MTU " + mtu + ", must be [0, master MTU(" + master.mtu() + ")]");
        }
    }

    /**
     * Creates the link and names it {@code ifName} inside the container; returns it as the result
     * lists it. On failure nothing is left behind.
     *
     * @param kind for messages: "macvlan", "ipvlan", "vlan"
     * @param spec the link to create under a given temporary name
     */
    public static Result.Interface create(Rtnl host, Netns cont, Rtnl crt, boolean linkInContainer, String kind,
                                          Function<String, NewLink> spec, String ifName, String sandbox) {
        String tmp = createUnderTemporaryName(tmp2 -> {
            NewLink l = spec.apply(tmp2);
            if (linkInContainer) {
                crt.addLink(l);
            } else {
                host.addLink(l.namespace(cont));
            }
        }, kind);
        return renameInContainer(crt, tmp, ifName, kind, sandbox);
    }

    /** Runs {@code add} with fresh temporary names until one is free; returns the name used. */
    static String createUnderTemporaryName(Consumer<String> add, String kind) {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            String tmp = Veth.randomName();
            try {
                add.accept(tmp);
                return tmp;
            } catch (ErrnoException e) {
                if (e.is(Errno.EEXIST)) continue;
                if (e.is(Errno.EOPNOTSUPP)) throw missingDriver(kind, e);
                throw new CniException(ErrorCode.INTERNAL, "failed to create " + kind, e);
            }
        }
        throw new CniException(ErrorCode.INTERNAL, "failed to create " + kind, "no free temporary name after " + ATTEMPTS + " attempts");
    }

    /** Renames the new link in the container and reads its MAC; deletes it when that fails. */
    static Result.Interface renameInContainer(Rtnl crt, String tmp, String ifName, String kind, String sandbox) {
        try {
            Link l = crt.link(tmp);
            try {
                crt.rename(l.index(), ifName);
            } catch (ErrnoException e) {
                throw new CniException(ErrorCode.INTERNAL, "failed to rename " + kind + " to \"" + ifName + "\"", e);
            }
            Link renamed = crt.link(l.index());
            return new Result.Interface(ifName, renamed.mac().toString(), sandbox);
        } catch (RuntimeException e) {
            Links.deleteQuietly(crt, tmp);
            if (e instanceof CniException c) throw c;
            throw new CniException(ErrorCode.INTERNAL, "failed to refetch " + kind + " \"" + ifName + "\"", e);
        }
    }

    /**
     * The error for a kernel that has no driver for {@code kind} (RTM_NEWLINK answered EOPNOTSUPP,
     * "Unknown device type"). Code 50, "the plugin is not available": the plugin cannot serve ADD
     * on this node, and retrying will not help until the module is there.
     */
    public static CniException missingDriver(String kind, ErrnoException e) {
        return new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE,
                "the kernel has no " + kind + " support (RTM_NEWLINK: operation not supported)",
                e.getMessage() + "; load the kernel module (" + module(kind) + ") or use a kernel built with it", e);
    }

    /** The kernel module that provides a link kind, for the hint in {@link #missingDriver}. */
    static String module(String kind) {
        return switch (kind) {
            case "vlan" -> "8021q";
            default -> kind;
        };
    }
}
