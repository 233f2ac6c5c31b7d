package io.jcni.cli.doctor;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What {@link NodeProbe} found on a node: plain data, no judgement. {@link Checks} turns it into
 * findings, so every rule is unit-tested with hand-made facts and no root.
 */
public record NodeFacts(
        List<Feature> kernel,
        Access netlink,
        Access nft,
        Path confDir,
        boolean confDirExists,
        List<Network> networks,
        List<BadFile> badFiles,
        List<Path> cniPath,
        Daemon daemon,
        List<Cached> cached,
        List<Allocation> allocations,
        List<OwnedLink> links,
        List<NftOwner> nftOwners,
        List<Unread> unread) {

    /** Facts with nothing left unread. */
    public NodeFacts(List<Feature> kernel, Access netlink, Access nft, Path confDir, boolean confDirExists, List<Network> networks,
            List<BadFile> badFiles, List<Path> cniPath, Daemon daemon, List<Cached> cached, List<Allocation> allocations,
            List<OwnedLink> links, List<NftOwner> nftOwners) {
        this(kernel, netlink, nft, confDir, confDirExists, networks, badFiles, cniPath, daemon, cached, allocations, links, nftOwners, List.of());
    }

    public enum State { AVAILABLE, MISSING, UNKNOWN }

    /** A kernel feature as probed in a scratch network namespace. */
    public record Feature(String name, State state, String detail) {}

    /** Whether an interface jcni needs answered, and if not, why. */
    public record Access(boolean ok, String detail) {}

    /**
     * A network that loads from the conf dir.
     *
     * @param plugins     each plugin type it names (IPAM types included) and where it was found on CNI_PATH (null: not found)
     * @param masquerades some plugin has {@code ipMasq} (needs nf_tables)
     */
    public record Network(String name, Path file, String cniVersion, Map<String, Path> plugins, boolean masquerades) {}

    /** A conf dir file that does not load, with the loader's reason. */
    public record BadFile(Path file, String reason) {}

    /** @param servicesDown "NAME failed: WHY" or "NAME stalled: WHY" of each hosted service that does not serve */
    public record Daemon(Path socket, boolean running, long pid, List<String> servicesDown) {
        public Daemon {
            servicesDown = List.copyOf(servicesDown);
        }
    }

    /** A result-cache entry: an attachment the runtime made. netnsExists is true when the path is empty (unknown). */
    public record Cached(String network, String containerId, String ifName, String netns, boolean netnsExists) {}

    /**
     * State the doctor could not judge: a directory it could not list, or a file in one that is not
     * what the directory holds (never its content: only the reason).
     *
     * @param what      whose state it is, in words ("the result cache", "host-local's addresses of \"net\"")
     * @param malformed true: the file is there but no state of the expected format; false: it could not be read
     */
    public record Unread(Path path, String what, String reason, boolean malformed) {}

    /** A host-local reservation file; ifName is null in the legacy format (container ID only). */
    public record Allocation(String network, Path file, String ip, String containerId, String ifName) {}

    /** A host-side link jcni tagged with its attachment (alias {@code jcni/NET/CID/IF} or {@code jcni-bandwidth/...}). */
    public record OwnedLink(String name, String kind, String network, String containerId, String ifName) {}

    /**
     * An attachment holding elements in jcni's nftables table (portmap, firewall, masquerade).
     *
     * @param recorded jcni's ownership record exists (GC can remove the elements); false: only an
     *                 element's comment in the kernel names it (a crash fell between the two writes)
     */
    public record NftOwner(String scope, String network, String containerId, String ifName, String comment, boolean recorded) {}
}
