package io.jcni.plugins.meta.firewall;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.testutil.PluginCall;
import io.jcni.plugins.testutil.Topology;
import io.jcni.testfixtures.Peers;
import io.jcni.testfixtures.Proc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The firewall on a host whose iptables drops forwarded traffic (Docker's {@code FORWARD} policy
 * DROP, with bridged traffic passing iptables: bridge-nf-call-iptables), all inside a private
 * "host" namespace: iptables state is per namespace, the root namespace's is never touched.
 */
@Tag("root")
class FirewallIptablesTest {
    static final Path REFERENCE = Path.of("/usr/lib/cni/firewall");

    @TempDir
    Path tmp;
    Topology w;
    String a1;
    String a2;

    @AfterEach
    void cleanup() {
        if (w != null) w.close();
    }

    /** One bridge with a1 and a2 (dual-stack); iptables' FORWARD policy DROP when {@code dockerLike}. */
    void world(boolean dockerLike) {
        w = new Topology();
        w.bridge("br0", "10.84.0.1/24", "fd00:84::1/64");
        a1 = w.container("a1", "br0", new String[] {"10.84.0.2/24", "fd00:84::2/64"}, new String[] {"10.84.0.1"});
        a2 = w.container("a2", "br0", new String[] {"10.84.0.3/24", "fd00:84::3/64"}, new String[] {"10.84.0.1"});
        if (!dockerLike) return;
        hostSh("sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1");
        hostSh("sysctl", "-qw", "net.bridge.bridge-nf-call-ip6tables=1");
        hostSh("iptables", "-P", "FORWARD", "DROP");
        hostSh("ip6tables", "-P", "FORWARD", "DROP");
    }

    String hostSh(String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", w.host));
        c.addAll(List.of(cmd));
        return Topology.sh(c.toArray(String[]::new));
    }

    /** The rules of CNI-FORWARD (iptables, or ip6tables with {@code v6}) in the host namespace. */
    List<String> forwardRules(boolean v6) {
        List<String> out = new ArrayList<>();
        for (String l : hostSh(v6 ? "ip6tables" : "iptables", "-S", "CNI-FORWARD").split("\n")) if (l.startsWith("-A ")) out.add(l);
        return out;
    }

    boolean ping(String fromNs, String to) {
        return Proc.run(List.of("ip", "netns", "exec", fromNs, "ping", "-c", "1", "-W", "2", to)).rc() == 0;
    }

    String conf(String ns, String... ips) {
        StringBuilder s = new StringBuilder();
        for (String ip : ips) s.append(s.isEmpty() ? "" : ",").append("{\"address\":\"").append(ip).append("\",\"interface\":1}");
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"fw\",\"type\":\"firewall\",\"backend\":\"iptables\",\"dataDir\":\"" + tmp.resolve("state") + "\""
                + ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"br0\"},{\"name\":\"eth0\",\"sandbox\":\""
                + w.nsPath(ns) + "\"}],\"ips\":[" + s + "]}}";
    }

    String bare() {
        return "{\"cniVersion\":\"1.1.0\",\"name\":\"fw\",\"type\":\"firewall\",\"dataDir\":\"" + tmp.resolve("state") + "\"}";
    }

    Map<String, Object> call(String cmd, String id, String conf) {
        return w.hostNs.run(() -> new PluginCall("firewall").env("CNI_CONTAINERID", id).ok(cmd, conf));
    }

    static List<String> ours(String host) {
        return List.of("-A CNI-FORWARD -d " + host + " -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
                "-A CNI-FORWARD -s " + host + " -j ACCEPT");
    }

    @Test
    void forwardDropPolicyNoLongerDropsTheContainers() {
        world(true);
        assertFalse(ping(a2, "10.84.0.2"), "the setup drops bridged traffic (else this test proves nothing)");
        call("ADD", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));
        call("ADD", "a2", conf(a2, "10.84.0.3/24", "fd00:84::3/64"));
        call("ADD", "a2", conf(a2, "10.84.0.3/24", "fd00:84::3/64")); // idempotent
        assertTrue(ping(a2, "10.84.0.2"));
        assertTrue(ping(a1, "10.84.0.3"));
        assertTrue(ping(a1, "fd00:84::3"));

        List<String> v4 = new ArrayList<>(List.of("-A CNI-FORWARD -m comment --comment \"CNI firewall plugin admin overrides\" -j CNI-ADMIN"));
        v4.addAll(ours("10.84.0.2/32"));
        v4.addAll(ours("10.84.0.3/32"));
        assertEquals(v4, forwardRules(false));
        assertEquals(5, forwardRules(true).size(), forwardRules(true).toString());
        String forward = hostSh("iptables", "-S", "FORWARD");
        assertTrue(forward.startsWith("-P FORWARD DROP\n-A FORWARD -m comment --comment \"CNI firewall plugin rules\" -j CNI-FORWARD\n"), forward);
        assertEquals(1, forward.split("CNI-FORWARD", -1).length - 1, "one jump: " + forward);
        call("CHECK", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));

        // CHECK sees a rule gone; ADD puts it back.
        hostSh("iptables", "-D", "CNI-FORWARD", "-s", "10.84.0.2/32", "-j", "ACCEPT");
        Map<String, Object> err = w.hostNs.run(() -> new PluginCall("firewall").env("CNI_CONTAINERID", "a1").fails("CHECK", conf(a1, "10.84.0.2/24", "fd00:84::2/64")));
        assertTrue(String.valueOf(err.get("msg")).contains("-s 10.84.0.2/32 -j ACCEPT"), err.toString());
        call("ADD", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));
        call("CHECK", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));

        // DEL without prevResult removes a2's rules only; the chains stay.
        call("DEL", "a2", bare());
        assertFalse(String.join("\n", forwardRules(false)).contains("10.84.0.3"), forwardRules(false).toString());
        assertTrue(forwardRules(false).containsAll(ours("10.84.0.2/32")));
        assertFalse(String.join("\n", forwardRules(true)).contains("fd00:84::3"));
        assertTrue(ping(a1, "10.84.0.3"), "a1 may still open connections, replies come back");
        assertFalse(ping(a2, "10.84.0.2"), "a2's own rule is gone: its new connections are dropped again");
        call("DEL", "a2", bare()); // again: nothing left, no error
        call("CHECK", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));
    }

    @Test
    void gcRemovesOnlyRulesOfAddressesNoAttachmentHolds() {
        world(true);
        call("ADD", "a1", conf(a1, "10.84.0.2/24"));
        call("ADD", "a2", conf(a2, "10.84.0.3/24"));
        // Left by a crash (our shape, nobody holds it), and an administrator's own rule.
        hostSh("iptables", "-A", "CNI-FORWARD", "-s", "10.84.0.99/32", "-j", "ACCEPT");
        hostSh("iptables", "-A", "CNI-FORWARD", "-s", "10.84.0.0/24", "-p", "tcp", "-j", "ACCEPT");
        hostSh("iptables", "-A", "CNI-ADMIN", "-s", "10.84.0.3/32", "-j", "DROP");
        w.hostNs.run(() -> new PluginCall("firewall").ok("GC", "{\"cniVersion\":\"1.1.0\",\"name\":\"fw\",\"type\":\"firewall\",\"dataDir\":\""
                + tmp.resolve("state") + "\",\"cni.dev/valid-attachments\":[{\"containerID\":\"a1\",\"ifname\":\"eth0\"}]}"));
        List<String> want = new ArrayList<>(List.of("-A CNI-FORWARD -m comment --comment \"CNI firewall plugin admin overrides\" -j CNI-ADMIN"));
        want.addAll(ours("10.84.0.2/32"));
        want.add("-A CNI-FORWARD -s 10.84.0.0/24 -p tcp -j ACCEPT");
        assertEquals(want, forwardRules(false));
        assertTrue(hostSh("iptables", "-S", "CNI-ADMIN").contains("-A CNI-ADMIN -s 10.84.0.3/32 -j DROP"), "the admin chain is never touched");
    }

    /** A host where iptables has no filter table: jcni runs no iptables and creates none. */
    @Test
    void noIptablesTableNoIptables() {
        world(false);
        call("ADD", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));
        call("CHECK", "a1", conf(a1, "10.84.0.2/24", "fd00:84::2/64"));
        call("DEL", "a1", bare());
        String tables = w.nft("list", "tables");
        assertFalse(tables.contains("table ip filter") || tables.contains("table ip6 filter"), tables);
    }

    /** The reference plugin and jcni leave the same iptables state for the same container (a host may move between them). */
    @Test
    @Tag("interop")
    void sameIptablesRulesAsTheReferencePlugin() {
        Peers.requireExecutable(REFERENCE, "containernetworking-plugins");
        world(true);
        String conf = conf(a1, "10.84.0.2/24", "fd00:84::2/64");
        ProcessBuilder pb = new ProcessBuilder("ip", "netns", "exec", w.host, REFERENCE.toString());
        pb.environment().putAll(Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "a1", "CNI_NETNS", w.nsPath(a1), "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni"));
        Proc.Out ref = Proc.run(pb, conf, 30);
        assertEquals(0, ref.rc(), ref.out() + ref.err());
        String theirs4 = hostSh("iptables", "-S");
        String theirs6 = hostSh("ip6tables", "-S");
        assertTrue(theirs4.contains("-A CNI-FORWARD -s 10.84.0.2/32 -j ACCEPT"), theirs4);

        // Back to the bare Docker-like table, then jcni.
        for (String prog : List.of("iptables", "ip6tables")) {
            hostSh(prog, "-F");
            hostSh(prog, "-X");
            hostSh(prog, "-P", "FORWARD", "DROP");
        }
        call("ADD", "a1", conf);
        assertEquals(theirs4, hostSh("iptables", "-S"));
        assertEquals(theirs6, hostSh("ip6tables", "-S"));

        // And the reference's DEL removes what jcni wrote (a host moving back).
        pb.environment().put("CNI_COMMAND", "DEL");
        Proc.Out del = Proc.run(pb, conf, 30);
        assertEquals(0, del.rc(), del.out() + del.err());
        assertEquals(List.of("-A CNI-FORWARD -m comment --comment \"CNI firewall plugin admin overrides\" -j CNI-ADMIN"), forwardRules(false));
    }
}
