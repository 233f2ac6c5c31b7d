package io.jcni.cli.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.cli.doctor.Finding.Severity;
import io.jcni.cli.doctor.NodeFacts.Access;
import io.jcni.cli.doctor.NodeFacts.Allocation;
import io.jcni.cli.doctor.NodeFacts.BadFile;
import io.jcni.cli.doctor.NodeFacts.Cached;
import io.jcni.cli.doctor.NodeFacts.Daemon;
import io.jcni.cli.doctor.NodeFacts.Feature;
import io.jcni.cli.doctor.NodeFacts.Network;
import io.jcni.cli.doctor.NodeFacts.NftOwner;
import io.jcni.cli.doctor.NodeFacts.OwnedLink;
import io.jcni.cli.doctor.NodeFacts.State;
import io.jcni.types.Json;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChecksTest {
    private static final Path BIN = Path.of("/opt/cni/bin");

    /** A healthy node: one bridge network with its plugins, every feature, nft, a daemon, one live attachment. */
    private static NodeFacts healthy() {
        return facts(List.of(net("n1", "1.1.0", false, "bridge", "host-local", "portmap")), List.of(),
                List.of(new Cached("n1", "c1", "eth0", "/var/run/netns/c1", true)),
                List.of(new Allocation("n1", Path.of("/d/n1/10.0.0.2"), "10.0.0.2", "c1", "eth0")),
                List.of(new OwnedLink("veth1", "veth", "n1", "c1", "eth0")),
                List.of(new NftOwner("portmap", "n1", "c1", "eth0", "portmap n1 c1 eth0", true)));
    }

    private static NodeFacts facts(List<Network> nets, List<BadFile> bad, List<Cached> cached, List<Allocation> allocs,
                                   List<OwnedLink> links, List<NftOwner> owners) {
        List<Feature> kernel = new ArrayList<>();
        for (String f : Checks.FEATURES.keySet()) {
            kernel.add(new Feature(f, f.equals("ipvlan") || f.equals("vlan") ? State.MISSING : State.AVAILABLE, "probe"));
        }
        return new NodeFacts(kernel, new Access(true, "4 links"), new Access(true, "no tables"), Path.of("/etc/cni/net.d"), true,
                nets, bad, List.of(BIN), new Daemon(Path.of("/run/jcni/jcnid.sock"), true, 42, List.of()), cached, allocs, links, owners);
    }

    private static Network net(String name, String version, boolean masq, String... types) {
        Map<String, Path> p = new LinkedHashMap<>();
        for (String t : types) p.put(t, t.startsWith("missing-") ? null : BIN.resolve(t));
        return new Network(name, Path.of("/etc/cni/net.d/" + name + ".conflist"), version, p, masq);
    }

    private static List<Finding> problems(NodeFacts f) {
        return Checks.evaluate(f).stream().filter(x -> x.severity().problem()).toList();
    }

    @Test
    void healthyNodeIsAllWellAndReportsEveryCheck() {
        List<Finding> all = Checks.evaluate(healthy());
        assertTrue(Doctor.allWell(all), () -> Doctor.render(all));
        for (String c : List.of("kernel", "netlink", "nft", "config", "daemon", "leftovers")) {
            assertTrue(all.stream().anyMatch(f -> f.check().equals(c)), c);
        }
        // Kernel features nobody configured are mentioned, not counted.
        Finding ipvlan = all.stream().filter(f -> f.subject().equals("ipvlan")).findFirst().orElseThrow();
        assertEquals(Severity.INFO, ipvlan.severity());
        assertTrue(ipvlan.fix().contains("modprobe ipvlan"));
        assertTrue(Doctor.render(all).endsWith("jcni doctor: all is well\n"));
    }

    @Test
    void missingFeatureThatANetworkNeedsFails() {
        NodeFacts f = facts(List.of(net("iv", "1.0.0", false, "ipvlan", "host-local")), List.of(), List.of(), List.of(), List.of(), List.of());
        List<Finding> p = problems(f);
        assertEquals(1, p.size(), p::toString);
        assertEquals(Severity.FAIL, p.getFirst().severity());
        assertTrue(p.getFirst().message().contains("iv (ipvlan)"), p.getFirst().message());
        assertTrue(p.getFirst().fix().contains("CONFIG_IPVLAN"));
    }

    @Test
    void ipMasqNeedsNfTablesAndNft() {
        NodeFacts base = facts(List.of(net("m", "1.0.0", true, "bridge", "host-local")), List.of(), List.of(), List.of(), List.of(), List.of());
        NodeFacts f = new NodeFacts(base.kernel(), base.netlink(), new Access(false, "nft not found (No such file)"), base.confDir(), true,
                base.networks(), List.of(), base.cniPath(), base.daemon(), List.of(), List.of(), List.of(), List.of());
        Finding nft = problems(f).getFirst();
        assertEquals("nft", nft.check());
        assertEquals(Severity.FAIL, nft.severity());
        assertTrue(nft.message().contains("m (ipMasq)"));
        assertEquals("apt-get install nftables", nft.fix());
        assertEquals(Map.of("nf_tables", java.util.Set.of("m (ipMasq)"), "bridge", java.util.Set.of("m (bridge)"),
                "veth", java.util.Set.of("m (bridge)")), Checks.featureUsers(base.networks()));
    }

    @Test
    void unknownFeaturesAskForRoot() {
        NodeFacts h = healthy();
        NodeFacts f = new NodeFacts(List.of(new Feature("bridge", State.UNKNOWN, "no scratch network namespace: EPERM")), h.netlink(),
                h.nft(), h.confDir(), true, h.networks(), List.of(), h.cniPath(), h.daemon(), h.cached(), h.allocations(), h.links(), h.nftOwners());
        Finding p = problems(f).getFirst();
        assertEquals(Severity.WARN, p.severity());
        assertEquals("run jcni doctor as root", p.fix());
    }

    @Test
    void brokenConfigAndMissingPluginAreFailuresWithFixes() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "bridge", "missing-plugin")),
                List.of(new BadFile(Path.of("/etc/cni/net.d/20-bad.conflist"), "expected a string key at line 1")),
                List.of(), List.of(), List.of(), List.of());
        List<Finding> p = problems(f);
        assertEquals(2, p.size(), p::toString);
        Finding bad = p.stream().filter(x -> x.check().equals("config")).findFirst().orElseThrow();
        assertTrue(bad.message().contains("20-bad.conflist does not load: expected a string key"));
        assertTrue(bad.fix().startsWith("correct the file"));
        Finding missing = p.stream().filter(x -> x.check().equals("plugins")).findFirst().orElseThrow();
        assertTrue(missing.message().contains("\"missing-plugin\", which is not in CNI_PATH /opt/cni/bin"));
        assertEquals("install \"missing-plugin\" into /opt/cni/bin, or add its directory to CNI_PATH", missing.fix());
    }

    @Test
    void emptyOrMissingConfDirWarns() {
        NodeFacts h = healthy();
        NodeFacts none = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), false, List.of(), List.of(), h.cniPath(),
                h.daemon(), List.of(), List.of(), List.of(), List.of());
        assertTrue(problems(none).getFirst().fix().startsWith("mkdir -p /etc/cni/net.d"));
        NodeFacts empty = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), true, List.of(), List.of(), h.cniPath(),
                h.daemon(), List.of(), List.of(), List.of(), List.of());
        assertTrue(problems(empty).getFirst().message().contains("holds no network configuration"));
    }

    @Test
    void daemonNotRunningIsInformationOnly() {
        NodeFacts h = healthy();
        NodeFacts f = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), true, h.networks(), List.of(), h.cniPath(),
                new Daemon(Path.of("/run/jcni/jcnid.sock"), false, -1, List.of()), h.cached(), h.allocations(), h.links(), h.nftOwners());
        List<Finding> all = Checks.evaluate(f);
        assertTrue(Doctor.allWell(all));
        Finding d = all.stream().filter(x -> x.check().equals("daemon")).findFirst().orElseThrow();
        assertEquals(Severity.INFO, d.severity());
        assertTrue(d.fix().contains("systemctl enable --now jcnid.socket"));
    }

    @Test
    void aHostedServiceThatDoesNotServeFailsTheDaemonCheck() {
        NodeFacts h = healthy();
        NodeFacts f = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), true, h.networks(), List.of(), h.cniPath(),
                new Daemon(Path.of("/run/jcni/jcnid.sock"), true, 42, List.of("docker-driver failed: state file /x: not JSON")),
                h.cached(), h.allocations(), h.links(), h.nftOwners());
        List<Finding> bad = problems(f);
        assertEquals(1, bad.size(), bad.toString());
        Finding d = bad.getFirst();
        assertEquals(Severity.FAIL, d.severity());
        assertEquals("daemon", d.check());
        assertEquals("service docker-driver", d.subject());
        assertTrue(d.message().contains("docker-driver failed: state file /x: not JSON"), d.message());
        assertTrue(d.fix().contains("restart jcnid"), d.fix());
    }

    @Test
    void leftoversEachGetTheGcCommandThatKeepsLiveAttachments() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "bridge", "host-local")), List.of(),
                List.of(new Cached("n1", "live", "eth0", "/var/run/netns/live", true),
                        new Cached("n1", "gone", "eth0", "/var/run/netns/gone", false)),
                List.of(new Allocation("n1", Path.of("/d/n1/10.0.0.2"), "10.0.0.2", "live", "eth0"),
                        new Allocation("n1", Path.of("/d/n1/10.0.0.9"), "10.0.0.9", "leaked", "eth0")),
                List.of(new OwnedLink("veth9", "veth", "n1", "leaked", "eth0")),
                List.of(new NftOwner("portmap", "n1", "leaked", "eth0", "portmap n1 leaked eth0", true)));
        List<Finding> p = problems(f);
        assertEquals(4, p.size(), p::toString);
        for (Finding x : p) {
            assertEquals("leftovers", x.check());
            assertEquals(Severity.WARN, x.severity());
            assertEquals("jcni gc n1 --valid live/eth0", x.fix(), x.message());
        }
        assertTrue(p.get(0).message().contains("/var/run/netns/gone, which no longer exists"));
        assertTrue(p.get(1).message().contains("address 10.0.0.9 in \"n1\" is allocated to container leaked (eth0)"));
        assertTrue(p.get(2).message().contains("link veth9 (veth) was made by jcni"));
        assertTrue(p.get(3).message().contains("comment \"portmap n1 leaked eth0\""));
    }

    @Test
    void withNoLiveAttachmentTheGcCommandSaysNone() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "bridge", "host-local")), List.of(), List.of(),
                List.of(new Allocation("n1", Path.of("/d/n1/10.0.0.9"), "10.0.0.9", "x", "eth0")), List.of(), List.of());
        assertEquals("jcni gc n1 --valid none", problems(f).getFirst().fix());
    }

    @Test
    void leftoversOfOlderConfigsOrUnknownNetworksGetManualFixes() {
        NodeFacts f = facts(List.of(net("old", "1.0.0", false, "bridge", "host-local")), List.of(), List.of(),
                List.of(new Allocation("old", Path.of("/d/old/10.0.0.9"), "10.0.0.9", "x", "eth0")),
                List.of(new OwnedLink("veth9", "veth", "removed", "x", "eth0")), List.of());
        List<Finding> p = problems(f);
        assertEquals("rm /d/old/10.0.0.9", p.get(0).fix());
        assertEquals("ip link del veth9", p.get(1).fix());
    }

    @Test
    void nftElementsOnlyTheKernelKnowsGetTheManualFix() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "bridge", "host-local", "portmap")), List.of(), List.of(), List.of(),
                List.of(), List.of(new NftOwner("portmap", "n1", "x", "eth0", "portmap n1 x eth0", false)));
        Finding p = problems(f).getFirst();
        assertTrue(p.message().endsWith("jcni has no record of them, so GC cannot remove them"), p.message());
        assertTrue(p.fix().startsWith("delete the elements commented \"portmap n1 x eth0\""), p.fix());
    }

    @Test
    void macspoofchkElementsAreNamedInTheirBridgeTable() {
        NodeFacts f = facts(List.of(net("n1", "1.0.0", false, "bridge", "host-local")), List.of(), List.of(), List.of(),
                List.of(), List.of(new NftOwner("macspoofchk", "n1", "x", "eth0", "macspoofchk n1 x eth0", false)));
        Finding p = problems(f).getFirst();
        assertTrue(p.message().contains("(table bridge jcni, comment"), p.message());
        assertTrue(p.fix().endsWith("from table bridge jcni (nft -a list table bridge jcni shows them)"), p.fix());
    }

    @Test
    void ownersFromElementComments() {
        String ruleset = """
                table inet jcni {
                	map portmap_dnat {
                		elements = { 8080 : 10.0.0.2 . 80 comment "portmap n1 c1 eth0",
                			     8081 : 10.0.0.3 . 80 comment "portmap n1 c2 eth0" }
                	}
                	set odd { elements = { 1 comment "not an owner" } }
                	chain c { comment "portmap n1 c1 eth0" }
                }""";
        List<NftOwner> o = NodeProbe.commentOwners(ruleset);
        assertEquals(List.of(new NftOwner("portmap", "n1", "c1", "eth0", "portmap n1 c1 eth0", false),
                new NftOwner("portmap", "n1", "c2", "eth0", "portmap n1 c2 eth0", false)), o);
    }

    @Test
    void legacyAllocationsMatchByContainerOnly() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "bridge", "host-local")), List.of(),
                List.of(new Cached("n1", "c1", "eth0", "", true)),
                List.of(new Allocation("n1", Path.of("/d/n1/10.0.0.2"), "10.0.0.2", "c1", null)), List.of(), List.of());
        assertTrue(problems(f).isEmpty());
    }

    @Test
    void jsonCarriesSeverityAndFix() {
        NodeFacts f = facts(List.of(net("n1", "1.1.0", false, "missing-x")), List.of(), List.of(), List.of(), List.of(), List.of());
        Map<String, Object> j = Json.parseObject(Json.writePretty(Doctor.toJson(Checks.evaluate(f))));
        assertFalse((Boolean) j.get("ok"));
        assertEquals(1L, ((Number) j.get("problems")).longValue());
        assertTrue(Json.writePretty(j).contains("\"severity\": \"fail\""));
    }

    @Test
    void usageErrorsExitTwoAndHelpZero() {
        java.io.ByteArrayOutputStream o = new java.io.ByteArrayOutputStream(), e = new java.io.ByteArrayOutputStream();
        java.io.PrintStream out = new java.io.PrintStream(o, true), err = new java.io.PrintStream(e, true);
        assertEquals(2, Doctor.run(List.of("--bogus"), Map.of(), out, err));
        assertTrue(e.toString().contains("unknown option \"--bogus\""));
        assertEquals(2, Doctor.run(List.of("--conf-dir"), Map.of(), out, err));
        assertEquals(0, Doctor.run(List.of("--help"), Map.of(), out, err));
        assertTrue(o.toString().contains("Exit status: 0 all is well"));
    }

    @Test
    void stateItCouldNotReadIsAProblemNeverAllWell() {
        NodeFacts h = healthy();
        Path results = Path.of("/var/lib/cni/results");
        Path odd = Path.of("/var/lib/cni/networks/n/10.0.0.9");
        NodeFacts f = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), true, h.networks(), List.of(), h.cniPath(), h.daemon(),
                List.of(), List.of(), List.of(), List.of(), List.of(new NodeFacts.Unread(results, "the result cache", "permission denied", false),
                        new NodeFacts.Unread(odd, "host-local's addresses of \"n\"", "is a symlink, not a file the plugin wrote; not read", true)));
        List<Finding> p = problems(f);
        assertEquals(2, p.size(), p.toString());
        assertEquals("could not read the result cache in /var/lib/cni/results (permission denied): leftovers there were not checked",
                p.get(0).message());
        assertEquals("run jcni doctor as root", p.get(0).fix());
        assertTrue(p.get(1).message().startsWith(odd + " in host-local's addresses of \"n\" is not state jcni can read"), p.get(1).message());
        assertEquals("look at it and remove it: rm " + odd, p.get(1).fix());
        assertTrue(Checks.evaluate(f).stream().noneMatch(x -> x.message().contains("every one belongs")));
    }

    @Test
    void anUnreadableConfDirIsAConfigFailure() {
        NodeFacts h = healthy();
        NodeFacts f = new NodeFacts(h.kernel(), h.netlink(), h.nft(), h.confDir(), true, List.of(), List.of(), h.cniPath(), h.daemon(),
                List.of(), List.of(), List.of(), List.of(), List.of(new NodeFacts.Unread(h.confDir(), NodeProbe.CONF_DIR, "permission denied", false)));
        Finding p = problems(f).getFirst();
        assertEquals("config", p.check());
        assertEquals(Severity.FAIL, p.severity());
        assertTrue(p.message().startsWith("could not read the configuration directory /etc/cni/net.d (permission denied)"), p.message());
        assertEquals(1, problems(f).size(), problems(f).toString());
    }

    @Test
    void theReportEscapesControlCharactersFromFiles() {
        String r = Doctor.render(List.of(new Finding(Severity.WARN, "leftovers", "x", "file a\nFAIL  config    forged", "rm a\nb")));
        assertTrue(r.contains("WARN  leftovers file a\\x0aFAIL  config    forged\n"), r);
        assertTrue(r.contains("fix: rm a\\x0ab\n"), r);
        assertEquals(3, r.split("\n").length, r);
    }

    @Test
    void parsesJcniLinkAliasesOnly() {
        assertEquals(new OwnedLink("v", "veth", "n1", "c1", "eth0"), NodeProbe.ownedLink("v", "veth", "jcni/n1/c1/eth0"));
        assertEquals("n2", NodeProbe.ownedLink("i", "ifb", "jcni-bandwidth/n2/c/eth0").network());
        assertNull(NodeProbe.ownedLink("v", "veth", "something else"));
        assertNull(NodeProbe.ownedLink("v", "veth", "jcni/n1/c1"));
        assertNull(NodeProbe.ownedLink("v", "veth", null));
    }

    @Test
    void aKubernetesRuntimeUsesTheFirstFileByNameAndAJcniFileBehindAnotherIsAWarning() {
        NodeFacts behind = facts(List.of(net("10-jcni", "1.0.0", false, "flannel", "portmap"), net("05-calico", "1.0.0", false, "bridge")),
                List.of(), List.of(), List.of(), List.of(), List.of());
        List<Finding> p = problems(behind);
        assertEquals(1, p.size(), p.toString());
        assertEquals(Severity.WARN, p.getFirst().severity());
        assertTrue(p.getFirst().message().contains("05-calico.conflist") && p.getFirst().message().contains("10-jcni.conflist"), p.toString());

        // A file that does not load still sorts where it is: it is what the runtime tries first.
        NodeFacts badFirst = facts(List.of(net("10-jcni", "1.0.0", false, "flannel")),
                List.of(new BadFile(Path.of("/etc/cni/net.d/01-broken.conf"), "not JSON")), List.of(), List.of(), List.of(), List.of());
        assertTrue(problems(badFirst).stream().anyMatch(x -> x.severity() == Severity.WARN && x.message().contains("01-broken.conf")));

        NodeFacts first = facts(List.of(net("00-jcni", "1.0.0", false, "flannel"), net("99-other", "1.0.0", false, "bridge")),
                List.of(), List.of(), List.of(), List.of(), List.of());
        assertTrue(problems(first).isEmpty(), problems(first).toString());
        assertTrue(Checks.evaluate(first).stream().anyMatch(x -> x.severity() == Severity.INFO && x.message().contains("uses only 00-jcni.conflist")));

        // One file: nothing to say.
        assertTrue(Checks.evaluate(healthy()).stream().noneMatch(x -> x.message().contains("first file by name")));
    }
}
