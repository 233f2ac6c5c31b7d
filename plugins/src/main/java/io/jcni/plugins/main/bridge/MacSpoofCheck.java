package io.jcni.plugins.main.bridge;

import io.jcni.linux.MacAddress;
import io.jcni.plugins.common.nft.ElementStore;
import io.jcni.plugins.common.nft.ElementStore.Element;
import io.jcni.plugins.common.nft.ElementStore.Owner;
import io.jcni.linux.nft.Nft;
import io.jcni.linux.nft.NftSyntax;
import io.jcni.plugins.skel.PluginRequest;
import io.jcni.types.Attachment;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Fields;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code macspoofchk: true}: frames entering the bridge from the container's host veth must carry
 * the container interface's MAC as their Ethernet source; others are dropped before the bridge
 * forwards or delivers them (the reference plugin's pkg/link/spoofcheck.go, same hook and priority).
 *
 * <p>The reference adds two chains and a rule per container to {@code table bridge nat} and, on
 * DEL, lists the prerouting chain to find its rule. Here, as for masquerade and portmap, the rule
 * is fixed and each attachment owns two hash-set elements, so ADD and DEL are one small
 * transaction whatever the number of containers, and DEL needs nothing but the attachment's own
 * state ({@link ElementStore}):
 * <pre>
 *   table bridge jcni
 *     set msc_ports { type ifname; }                   host veths under check
 *     set msc_macs  { type ifname . ether_addr; }      (host veth . the container's MAC)
 *     chain msc (filter prerouting -300, policy accept):
 *       iifname @msc_ports iifname . ether saddr != @msc_macs drop
 * </pre>
 * A bridge-family table because bridged frames never pass the inet hooks (without br_netfilter);
 * priority -300 runs before the bridge's forwarding decision, as the reference's chain does.
 *
 * <p>Differences from the reference (1.1.1), besides the layout: a DEL whose nft transaction fails
 * fails with code 11 and keeps the state for the retry (the reference only logs its teardown
 * error); DEL removes the elements whatever {@code macspoofchk} says now, from the attachment's
 * state; GC removes the elements of attachments not in {@code cni.dev/valid-attachments} (the
 * reference bridge has no GC). Like the reference, ADD sets the check up before IPAM, and CHECK
 * does not look at it. The two tables ({@code bridge nat}, {@code bridge jcni}) do not interfere.
 */
final class MacSpoofCheck {
    static final String SCOPE = "macspoofchk";
    static final String TABLE = "bridge jcni";
    static final String PORTS = "msc_ports";
    static final String MACS = "msc_macs";
    static final String CHAIN = "msc";

    private final ElementStore store;

    private MacSpoofCheck(Path dataDir) {
        this.store = ElementStore.at(Nft.current(), dataDir, TABLE);
    }

    /** ADD: the config's {@code dataDir} (jcni extension, as for ipMasq and portmap), strictly typed. */
    static MacSpoofCheck forAdd(Map<String, Object> conf) {
        String dir = Fields.string(conf, "dataDir", "");
        return new MacSpoofCheck(dir == null || dir.isEmpty() ? null : Path.of(dir));
    }

    /** DEL and GC: only {@code dataDir} locates the state; a value that is not a string counts as unset. */
    static MacSpoofCheck forCleanup(Map<String, Object> conf) {
        return new MacSpoofCheck(Fields.value(conf, "dataDir") instanceof String s && !s.isEmpty() ? Path.of(s) : null);
    }

    /** Lets only {@code containerMac} in from {@code hostVeth}; replaces what the attachment held before. */
    void setup(PluginRequest req, String hostVeth, MacAddress containerMac) {
        try {
            store.put(owner(req.networkName(), req.containerId(), req.ifname()), MacSpoofCheck::skeleton,
                    elements(hostVeth, containerMac.bytes()));
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to setup spoof-check", e.getMessage(), e);
        }
    }

    /**
     * DEL: removes the attachment's elements, from its own state whatever the config says now (a
     * config edited to {@code macspoofchk: false} must not leak them). Without state it does
     * nothing, not even create the state directory, so a bridge DEL without spoof checking
     * costs a file lookup.
     */
    void teardown(PluginRequest req) {
        Owner o = owner(req.networkName(), req.containerId(), req.ifname());
        try {
            if (store.elements(o).isEmpty()) return;
            store.remove(o, MacSpoofCheck::skeleton);
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to teardown spoof-check", e.getMessage(), e);
        }
    }

    /** GC: the elements of this network's attachments not in {@code valid}; returns how many attachments. */
    int gc(String network, List<Attachment> valid) {
        try {
            if (store.owners(SCOPE, network).isEmpty()) return 0;
            return store.gc(SCOPE, network, valid, MacSpoofCheck::skeleton).size();
        } catch (RuntimeException e) {
            throw new CniException(ErrorCode.INTERNAL, "failed to collect spoof-check elements", e.getMessage(), e);
        }
    }

    static Owner owner(String network, String containerId, String ifname) {
        return new Owner(SCOPE, network, containerId, ifname);
    }

    /**
     * The table, both sets and the chain with its one rule; idempotent (the rule is flushed and
     * re-added in the same transaction, so it never exists twice nor is missing in between).
     */
    static String skeleton(List<Element> ignored) {
        String t = TABLE + " ";
        return "add table " + TABLE + "\n"
                + "add set " + t + PORTS + " { type ifname; }\n"
                + "add set " + t + MACS + " { type ifname . ether_addr; }\n"
                + "add chain " + t + CHAIN + " { type filter hook prerouting priority -300; policy accept; }\n"
                + "flush chain " + t + CHAIN + "\n"
                + "add rule " + t + CHAIN + " iifname @" + PORTS + " iifname . ether saddr != @" + MACS + " drop\n";
    }

    /**
     * The attachment's two elements. Pure. Both parts pass {@link NftSyntax} (the name comes from
     * the kernel, but nothing reaches a script unchecked).
     *
     * @throws IllegalArgumentException for a name or address nft cannot take literally
     */
    static List<Element> elements(String hostVeth, byte[] containerMac) {
        String port = NftSyntax.ifname(hostVeth);
        return List.of(new Element(PORTS, port, null),
                new Element(MACS, port + " . " + NftSyntax.etherAddr(containerMac), null));
    }
}
