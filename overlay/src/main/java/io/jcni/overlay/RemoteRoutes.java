package io.jcni.overlay;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Nexthop;
import io.jcni.linux.Route;
import io.jcni.linux.Rtnl;
import io.jcni.linux.RtnlChanges;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The routes to remote subnets, each through a nexthop object of its own ({@code ip route add
 * DST nhid N}, the object {@code ip nexthop replace id N via GW dev DEV [onlink]}), or as plain
 * gateway routes where the kernel has no nexthop objects (before Linux 5.3) or the network is too
 * large for {@link NexthopIds}.
 *
 * <p>Why nexthop objects: the kernel's cost of adding a plain route through a gateway grows with
 * the routes through other gateways already there (5,000 remote subnets took the agent ~100 s),
 * while routes bound to nexthop objects cost the same at any count (overlay/README.md).
 *
 * <p>Ownership: routes carry {@link Dataplane#ROUTE_PROTOCOL}; nexthops too, and their ids lie in
 * {@link NexthopIds}' ranges. A route of the same destination that jcni did not make is left as
 * it is (the add returns false and the nexthop made for it goes again).
 */
final class RemoteRoutes {
    private final Rtnl rt;
    private final NexthopIds ids;
    private final Consumer<String> notice;
    /** Null until the first nexthop request tells. */
    private Boolean kernelHasNexthops;

    RemoteRoutes(Rtnl rt, NexthopIds ids, Consumer<String> notice) {
        this.rt = rt;
        this.ids = ids;
        this.notice = notice;
    }

    /** The nexthop id the route to {@code dst} goes through now; 0: a plain route. */
    private int id(Cidr dst) {
        return Boolean.FALSE.equals(kernelHasNexthops) ? 0 : ids.id(dst);
    }

    /**
     * Routes {@code dst} via {@code via} on device {@code dev} (marked as ours). On EEXIST the route
     * in its place is replaced only when it is ours (our protocol or nexthop range, or
     * {@code alsoOurs}); a foreign one is left alone and false returned.
     */
    boolean add(Cidr dst, IpAddr via, int dev, boolean onlink, Predicate<Route> alsoOurs) {
        int id = id(dst);
        if (id != 0) {
            Nexthop nh = Nexthop.via(id, via).dev(dev).protocol(Dataplane.ROUTE_PROTOCOL);
            Route route = Route.to(dst).nexthop(id).protocol(Dataplane.ROUTE_PROTOCOL);
            // One datagram: the object (replaced in place when a previous run made it) and the route.
            List<ErrnoException> out = rt.apply(new RtnlChanges().replaceNexthop(onlink ? nh.onlink() : nh).addRoute(route));
            ErrnoException nhFailed = out.get(0);
            if (nhFailed == null) {
                kernelHasNexthops = true;
                ErrnoException routeFailed = out.get(1);
                if (routeFailed == null) return true;
                if (routeFailed.is(Errno.EEXIST) && replaceIfOurs(route, alsoOurs)) return true;
                ignoreMissing(() -> rt.deleteNexthop(id));
                if (routeFailed.is(Errno.EEXIST)) return false;
                throw routeFailed;
            }
            if (!fallBack(nhFailed)) throw nhFailed;
        }
        Route plain = Route.to(dst).via(via).dev(dev).protocol(Dataplane.ROUTE_PROTOCOL);
        plain = onlink ? plain.onlink() : plain;
        try {
            rt.addRoute(plain);
            return true;
        } catch (ErrnoException e) {
            if (!e.is(Errno.EEXIST)) throw e;
        }
        return replaceIfOurs(plain, alsoOurs);
    }

    /**
     * Whether the first failed nexthop request means a kernel without nexthop objects: then every
     * route is a plain gateway route from now on, said once. An EINVAL can also be this request's
     * own fault (a gateway the kernel refuses); a nexthop dump that works tells them apart.
     */
    private boolean fallBack(ErrnoException failed) {
        if (kernelHasNexthops != null || !(failed.is(Errno.EOPNOTSUPP) || failed.is(Errno.EINVAL))) return false;
        try {
            rt.nexthops();
            kernelHasNexthops = true;
            return false;
        } catch (ErrnoException probe) {
            kernelHasNexthops = false;
            notice.accept("this kernel has no nexthop objects (" + failed.errnoName() + "); remote subnets get plain gateway routes");
            return true;
        }
    }

    /** After EEXIST: replaces the route holding {@code route}'s key when it is ours; false when it is foreign, or gone. */
    private boolean replaceIfOurs(Route route, Predicate<Route> alsoOurs) {
        Cidr dst = route.dst().masked();
        // The kernel's EEXIST is about this key: table main, destination, the default metric (ours have none).
        int metric = dst.isV6() ? Dataplane.IPV6_DEFAULT_METRIC : 0;
        for (Route old : rt.routes(dst.isV6() ? Family.INET6 : Family.INET, Route.TABLE_MAIN)) {
            if (!old.dst().masked().equals(dst) || old.priority() != metric) continue;
            boolean ours = old.protocol() == Dataplane.ROUTE_PROTOCOL || NexthopIds.owned(old.nhid()) || alsoOurs.test(old);
            if (!ours) return false;
            rt.replaceRoute(route);
            return true;
        }
        return false; // gone meanwhile, or another key (tos): leave it to the next resync
    }

    /**
     * Adds to {@code c} what removes the route to {@code dst}: its nexthop object (the route goes
     * with it) and {@code plain}, the plain routes an earlier version or the fallback may have made.
     */
    void removal(RtnlChanges c, Cidr dst, Route... plain) {
        int id = ids.id(dst);
        if (id != 0 && !Boolean.FALSE.equals(kernelHasNexthops)) c.deleteNexthop(id);
        for (Route r : plain) c.deleteRoute(r);
    }

    /** Applies {@code c} (removals): an entry already gone is fine; the first other error is thrown. */
    void applyRemovals(RtnlChanges c) {
        for (ErrnoException e : rt.apply(c)) {
            if (e != null && !missing(e)) throw e;
        }
    }

    /**
     * Deletes jcni's nexthop objects (its range, its protocol) whose id is not in {@code keep}:
     * those of subnets that went while the agent was not running. Their routes go with them.
     * Returns how many went.
     */
    int sweep(Set<Integer> keep) {
        RtnlChanges c = new RtnlChanges();
        for (Nexthop nh : nexthops()) {
            if (NexthopIds.owned(nh.id()) && nh.protocol() == Dataplane.ROUTE_PROTOCOL && !keep.contains(nh.id())) c.deleteNexthop(nh.id());
        }
        applyRemovals(c);
        return c.size();
    }

    /** Every nexthop object of the namespace (one dump); none on a kernel without them. */
    List<Nexthop> nexthops() {
        if (Boolean.FALSE.equals(kernelHasNexthops)) return List.of();
        try {
            return rt.nexthops();
        } catch (ErrnoException e) {
            if (e.is(Errno.EOPNOTSUPP) || e.is(Errno.EINVAL)) return List.of();
            throw e;
        }
    }

    /** The ids the routes of {@code dst} go through while programmed (for {@link #sweep} and the route check); 0 for a plain route. */
    int idOf(Cidr dst) {
        return id(dst);
    }

    static boolean missing(ErrnoException e) {
        return e.is(Errno.ESRCH) || e.is(Errno.ENOENT) || e.is(Errno.ENODEV) || e.is(Errno.EOPNOTSUPP);
    }

    static void ignoreMissing(Runnable r) {
        try {
            r.run();
        } catch (ErrnoException e) {
            if (!missing(e)) throw e;
        }
    }
}
