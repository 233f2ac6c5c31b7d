package io.jcni.plugins.common.link;

import io.jcni.linux.Errno;
import io.jcni.linux.ErrnoException;
import io.jcni.linux.Link;
import io.jcni.linux.MacAddress;
import io.jcni.linux.Netns;
import io.jcni.linux.NewLink;
import io.jcni.linux.Rtnl;
import io.jcni.plugins.common.ip.Sysctls;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A veth pair between a container and the host, as pkg/ip's SetupVeth leaves it: the container end
 * named CNI_IFNAME, the host end named {@code veth} + 8 random hex digits (or a requested name), up,
 * with IPv6 router advertisements ignored on the host end. The host end is born in the host
 * namespace, marked as unfinished, and tagged with its owner right after (see {@code createThenTag}).
 *
 * <p>Unlike SetupVeth, one RTM_NEWLINK makes the pair with the host end already up and, for a
 * bridge port, already enslaved (IFLA_MASTER), as {@code ip link add ... master BR up type veth peer
 * name eth0 netns C} does; SetupVeth and the bridge plugin send three more requests for that. Every
 * request that changes a link takes the kernel's rtnl lock, and under many concurrent pods each one
 * queues behind the slow holders (namespace creation and teardown, link deletion):
 * docs/performance.md, "Under 50 concurrent lifecycles".
 *
 * @param host the host end, up (its index is the host namespace's)
 * @param container the container end, still down
 */
public record Veth(Link host, Link container) {
    private static final int ATTEMPTS = 10;
    private static final Path URANDOM = Path.of("/dev/urandom");

    /**
     * "veth" and 4 random bytes in hex, like ip.RandomVethName. The bytes come straight from
     * /dev/urandom, as Go's crypto/rand reads them: a SecureRandom would cost a standalone plugin
     * ~10 ms of security-provider start-up for 4 bytes. A clash is retried by {@link #setup}.
     */
    public static String randomName() {
        byte[] b = new byte[4];
        try (InputStream in = Files.newInputStream(URANDOM)) {
            if (in.readNBytes(b, 0, b.length) != b.length) ThreadLocalRandom.current().nextBytes(b);
        } catch (IOException e) {
            ThreadLocalRandom.current().nextBytes(b);
        }
        return "veth" + HexFormat.of().formatHex(b);
    }

    /**
     * The host end is born in the host namespace, as pkg/ip makes it, in its creator's birth group
     * ({@link BirthMarks}), and the next request sets its tag and takes it out of that group. It
     * used to be born in the container's namespace, tagged there and then moved, so that no kill
     * could leave an untagged host end; but moving a device between namespaces waits for an RCU
     * grace period under the rtnl lock (13-25 ms per ADD on the benchmark machine, and every
     * concurrent ADD waited behind it: docs/performance.md). A kill between the two requests
     * leaves the pair marked but untagged, which GC deletes once the creator is gone.
     *
     * @throws ErrnoException EEXIST when either name is taken
     */
    private static void createThenTag(Rtnl hostRt, Rtnl containerRt, NewLink pair, String containerName, String hostEnd,
                                      String ownerTag) {
        hostRt.addLink(pair.group(BirthMarks.ownGroup()));
        try {
            hostRt.setAliasAndGroup(hostRt.link(hostEnd).index(), ownerTag, 0);
        } catch (RuntimeException e) {
            Links.deleteQuietly(containerRt, containerName);
            throw e;
        }
    }

    /**
     * Creates the pair. Host-side work goes through {@code hostRt}, and host sysctls are written for
     * the calling thread's namespace, so call this on a thread in {@code hostRt}'s namespace.
     *
     * @param containerNs the namespace of {@code containerRt}, where the container end is born
     * @param hostName the host end's name, or null for a random one (retried on a clash)
     * @param mtu 0 for the kernel default; applies to both ends
     * @param mac the container end's MAC, or null
     * @param ownerTag written as the host end's alias (see {@link OwnedLinks}), or null
     * @param masterIndex the bridge the host end joins at birth, or 0
     */
    public static Veth setup(Rtnl hostRt, Rtnl containerRt, Netns containerNs, String containerName, String hostName,
                             int mtu, MacAddress mac, String ownerTag, int masterIndex) {
        String peer = null;
        for (int attempt = 0; attempt < ATTEMPTS && peer == null; attempt++) {
            String candidate = hostName != null ? hostName : randomName();
            NewLink pair = NewLink.veth(candidate, containerName).up().master(masterIndex).mtu(mtu)
                    .peerNamespace(containerNs).peerMac(mac);
            try {
                if (ownerTag == null) {
                    hostRt.addLink(pair);
                } else {
                    createThenTag(hostRt, containerRt, pair, containerName, candidate, ownerTag);
                }
                peer = candidate;
            } catch (ErrnoException e) {
                if (!e.is(Errno.EEXIST)) {
                    throw new CniException(ErrorCode.INTERNAL, "failed to make veth pair", e);
                }
                if (hostName == null && hostRt.findLink(candidate).isPresent()) continue;
                throw new CniException(ErrorCode.INTERNAL, "container veth name (\"" + containerName + "\") peer provided (\""
                        + candidate + "\") already exists", "", e);
            }
        }
        if (peer == null) throw new CniException(ErrorCode.INTERNAL, "failed to find a unique veth name");

        Link container;
        Link host;
        try {
            container = containerRt.link(containerName);
            // We want to own the routes for this interface.
            Sysctls.trySet(Sysctls.perIface("ipv6", peer, "accept_ra"), "0");
            host = hostRt.link(peer);
        } catch (ErrnoException e) {
            Links.deleteQuietly(containerRt, containerName);
            throw new CniException(ErrorCode.INTERNAL, "failed to set up veth " + peer, e);
        }
        return new Veth(host, container);
    }
}
