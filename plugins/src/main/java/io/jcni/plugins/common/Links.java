package io.jcni.plugins.common;

import io.jcni.linux.Address;
import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Family;
import io.jcni.linux.Link;
import io.jcni.linux.Rtnl;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Link helpers that treat "already gone" as success, for DEL and cleanup paths. */
public final class Links {
    private Links() {}

    /**
     * Deletes the link and returns its global unicast addresses (ip.DelLinkByNameAddr), or an
     * empty Optional when there is no such link.
     */
    public static Optional<List<Address>> deleteByNameAddr(Rtnl rt, String name) {
        Optional<Link> link = rt.findLink(name);
        if (link.isEmpty()) return Optional.empty();
        List<Address> out = new ArrayList<>();
        for (Address a : rt.addresses(link.get().index(), Family.ALL)) {
            if (isGlobalUnicast(a.address())) out.add(a);
        }
        try {
            rt.deleteLink(link.get().index());
        } catch (ErrnoException e) {
            if (e.is(Errno.ENODEV)) return Optional.empty(); // raced with another DEL
            throw e;
        }
        return Optional.of(out);
    }

    /** Deletes the link if it exists; true when it did. */
    public static boolean deleteIfExists(Rtnl rt, String name) {
        return deleteByNameAddr(rt, name).isPresent();
    }

    /** For cleanup after a failure: never throws. */
    public static void deleteQuietly(Rtnl rt, String name) {
        try {
            deleteIfExists(rt, name);
        } catch (RuntimeException ignored) {
            // the original error is the one to report
        }
    }

    static boolean isGlobalUnicast(InetAddress a) {
        return !(a.isLoopbackAddress() || a.isLinkLocalAddress() || a.isMulticastAddress() || a.isAnyLocalAddress()
                || isV4Broadcast(a));
    }

    private static boolean isV4Broadcast(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 4 && (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff;
    }
}
