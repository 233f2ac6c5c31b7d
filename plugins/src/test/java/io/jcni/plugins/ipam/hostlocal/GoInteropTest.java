package io.jcni.plugins.ipam.hostlocal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Peers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * jcni's host-local against the reference Go binary (Debian's containernetworking-plugins): same
 * output for the same input, and each takes over the other's state. host-local touches no
 * namespace, so running it needs no privileges. Without the binary it fails where peers are
 * required (scripts/test.sh as root) and is skipped elsewhere (testfixtures Peers).
 */
@Tag("interop")
class GoInteropTest {
    static final Path GO = Path.of("/usr/lib/cni/host-local");

    @TempDir
    Path tmp;

    @BeforeAll
    static void needsTheReferencePlugin() {
        Peers.requireExecutable(GO, "containernetworking-plugins");
    }

    String conf(Path dataDir, String version, String extraIpam) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"n1\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\","
                + "\"dataDir\":\"" + dataDir + "\",\"ranges\":[[{\"subnet\":\"10.9.0.0/24\"}],[{\"subnet\":\"fd00:9::/64\"}]],"
                + "\"routes\":[{\"dst\":\"0.0.0.0/0\"},{\"dst\":\"192.168.0.0/16\",\"gw\":\"10.9.0.1\"}]" + extraIpam + "}}";
    }

    /** Runs the Go plugin with a clean environment, as a runtime would. */
    static Skel.Outcome go(String command, String id, String ifname, String stdin) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(GO.toString());
        pb.environment().clear();
        pb.environment().put("CNI_COMMAND", command);
        pb.environment().put("CNI_CONTAINERID", id);
        pb.environment().put("CNI_NETNS", "/tmp/whatever");
        pb.environment().put("CNI_IFNAME", ifname);
        pb.environment().put("CNI_PATH", "/usr/lib/cni");
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        try (var in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Skel.Outcome(out, p.exitValue());
    }

    static Skel.Outcome jcni(String command, String id, String ifname, String stdin) {
        return new PluginCall("host-local").env("CNI_CONTAINERID", id).env("CNI_IFNAME", ifname)
                .env("CNI_NETNS", "/tmp/whatever").run(command, stdin);
    }

    /** Go host-local 1.1.1 implements up to 1.0.0. */
    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"})
    void printsTheSameResult(String v) throws Exception {
        Path goDir = Files.createDirectory(tmp.resolve("go"));
        Path jDir = Files.createDirectory(tmp.resolve("jcni"));
        for (String id : new String[] {"a", "b"}) {
            Skel.Outcome g = go("ADD", id, "eth0", conf(goDir, v, ""));
            Skel.Outcome j = jcni("ADD", id, "eth0", conf(jDir, v, ""));
            assertEquals(0, g.exitCode(), g.stdout());
            assertEquals(g, j);
        }
        for (String f : new String[] {"10.9.0.2", "10.9.0.3", "fd00:9::3", "last_reserved_ip.0", "last_reserved_ip.1"}) {
            assertEquals(Files.readString(goDir.resolve("n1").resolve(f)), Files.readString(jDir.resolve("n1").resolve(f)), f);
        }
    }

    /**
     * Inputs decoded by Go's encoding/json rules (docs/config-decoding.md): what runtimes send and
     * what hand-written configs contain. DATADIR stands for each side's own directory.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        // go-cni's untagged IPRanges struct (containerd), and podman's ips capability
        "{'cniVersion':'1.0.0','name':'n1','type':'bridge','ipam':{'type':'host-local','dataDir':'DATADIR'},"
            + "'runtimeConfig':{'ipRanges':[[{'Subnet':'10.9.0.0/24','RangeStart':'10.9.0.10','RangeEnd':'','Gateway':''}]]}}",
        "{'cniVersion':'1.0.0','name':'n1','type':'bridge','ipam':{'type':'host-local','dataDir':'DATADIR','subnet':'10.9.0.0/24'},"
            + "'runtimeConfig':{'ips':['10.9.0.77']}}",
        // every key in another case, as a hand-written config may have them
        "{'CNIVersion':'1.0.0','Name':'n1','Type':'bridge','IPAM':{'TYPE':'host-local','DataDir':'DATADIR',"
            + "'Ranges':[[{'SUBNET':'10.9.0.0/24','rangestart':'10.9.0.20'}]],'Routes':[{'Dst':'0.0.0.0/0','GW':'10.9.0.1'}]}}",
        // both spellings: the last wins; null is no value
        "{'cniVersion':'1.0.0','name':'n1','type':'bridge','ipam':{'type':'host-local','dataDir':'DATADIR',"
            + "'subnet':'10.8.0.0/24','Subnet':'10.9.0.0/24','RangeStart':'10.9.0.30','gateway':null}}",
        // the same key twice: the last wins
        "{'cniVersion':'1.0.0','name':'n1','type':'bridge','ipam':{'type':'host-local','dataDir':'DATADIR',"
            + "'subnet':'10.8.0.0/24','subnet':'10.9.0.0/24','routes':[{'dst':'0.0.0.0/0','mtu':1400}]}}",
        // unknown keys at every level
        "{'cniVersion':'1.0.0','name':'n1','type':'bridge','x':{'y':[1.5]},'ipam':{'type':'host-local','dataDir':'DATADIR',"
            + "'subnet':'10.9.0.0/24','mystery':true,'routes':[{'dst':'0.0.0.0/0','extra':'x'}]}}",
    })
    void runtimeAndHandWrittenInputsGiveGosResult(String template) throws Exception {
        String t = template.replace('\'', '"');
        Skel.Outcome g = go("ADD", "a", "eth0", t.replace("DATADIR", Files.createDirectory(tmp.resolve("go")).toString()));
        Skel.Outcome j = jcni("ADD", "a", "eth0", t.replace("DATADIR", Files.createDirectory(tmp.resolve("j")).toString()));
        assertEquals(0, g.exitCode(), g.stdout());
        assertEquals(g, j);
    }

    /** What Go's decoder refuses, jcni refuses too: malformed numbers, values of the wrong type. */
    @ParameterizedTest
    @ValueSource(strings = {"'subnet':'10.9.0.0/24','x':01", "'subnet':'10.9.0.0/24','x':1.", "'subnet':5",
        "'ranges':{}", "'subnet':'10.9.0.0/24','routes':[{'dst':7}]", "'subnet':'10.9.0.0/24','rangeStart':12",
        "'subnet':'10.9.0.0/24','Type':5", "'subnet':'10.9.0.0/24','dataDir':false"})
    void inputsGoRefusesAreRefused(String ipam) throws Exception {
        String c = ("{'cniVersion':'1.0.0','name':'n1','type':'bridge','ipam':{'type':'host-local','dataDir':'" + tmp
                + "'," + ipam + "}}").replace('\'', '"');
        if (ipam.contains("dataDir")) c = c.replace("\"dataDir\":\"" + tmp + "\",", "");
        assertEquals(1, go("ADD", "a", "eth0", c).exitCode(), ipam);
        assertEquals(1, jcni("ADD", "a", "eth0", c).exitCode(), ipam);
    }

    @Test
    void resolvConfDnsIsTheSame() throws Exception {
        Path rc = tmp.resolve("resolv.conf");
        Files.writeString(rc, "# x\nnameserver 10.9.0.53\nnameserver fd00::53\nsearch a.example b.example\n"
                + "options ndots:2 edns0\ndomain example.com\n");
        String extra = ",\"resolvConf\":\"" + rc + "\"";
        Skel.Outcome g = go("ADD", "a", "eth0", conf(Files.createDirectory(tmp.resolve("go")), "1.0.0", extra));
        Skel.Outcome j = jcni("ADD", "a", "eth0", conf(Files.createDirectory(tmp.resolve("j")), "1.0.0", extra));
        assertEquals(g, j);
    }

    @Test
    void sameErrorMessages() throws Exception {
        String[] ipams = {
            "\"subnet\":\"10.9.0.0/31\"",
            "\"subnet\":\"10.9.0.1/24\"",
            // (not compared: a gateway outside the subnet, which Go 1.1.1 accepts and newer upstream refuses, as jcni)
            "\"subnet\":\"10.9.0.0/24\",\"rangeStart\":\"10.9.0.50\",\"rangeEnd\":\"10.9.0.40\"",
            "\"ranges\":[[{\"subnet\":\"10.9.0.0/24\"},{\"subnet\":\"10.9.0.0/25\"}]]",
            "\"subnet\":\"::ffff:1.2.3.4/120\"",
            "\"ranges\":[[{\"subnet\":\"10.9.0.0/24\",\"rangeEnd\":\"10.9.0.128\"}],[{\"subnet\":\"10.9.0.0/24\",\"rangeStart\":\"10.9.0.15\"}]]",
            "\"type\":\"host-local\"",
        };
        for (String ipam : ipams) {
            String c = "{\"cniVersion\":\"1.0.0\",\"name\":\"n1\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\","
                    + "\"dataDir\":\"" + tmp + "\"," + ipam + "}}";
            Skel.Outcome g = go("ADD", "a", "eth0", c);
            Skel.Outcome j = jcni("ADD", "a", "eth0", c);
            assertEquals(1, g.exitCode());
            assertEquals(1, j.exitCode());
            assertEquals(io.jcni.types.Json.parseObject(g.stdout()).get("msg"), io.jcni.types.Json.parseObject(j.stdout()).get("msg"), ipam);
        }
    }

    @Test
    void goAddsJcniChecksAndDeletes() throws Exception {
        String c = conf(tmp, "1.0.0", "");
        Skel.Outcome g = go("ADD", "ctr", "eth0", c);
        assertEquals(0, g.exitCode(), g.stdout());
        String withPrev = c.substring(0, c.length() - 1) + ",\"prevResult\":" + g.stdout() + "}";
        assertEquals(0, jcni("CHECK", "ctr", "eth0", withPrev).exitCode());

        // jcni continues Go's round-robin from last_reserved_ip.
        Skel.Outcome j = jcni("ADD", "other", "eth0", c);
        assertTrue(j.stdout().contains("10.9.0.3/24") && j.stdout().contains("fd00:9::3/64"), j.stdout());

        assertEquals(0, jcni("DEL", "ctr", "eth0", c).exitCode());
        assertFalse(Files.exists(tmp.resolve("n1/10.9.0.2")));
        assertFalse(Files.exists(tmp.resolve("n1/fd00:9::2")));
        assertEquals(1, jcni("CHECK", "ctr", "eth0", withPrev).exitCode());
        assertEquals(0, jcni("DEL", "ctr", "eth0", c).exitCode());
        assertTrue(Files.exists(tmp.resolve("n1/10.9.0.3")));
    }

    @Test
    void jcniAddsGoChecksAndDeletes() throws Exception {
        String c = conf(tmp, "1.0.0", "");
        Skel.Outcome j = jcni("ADD", "ctr", "eth0", c);
        assertEquals(0, j.exitCode(), j.stdout());
        String withPrev = c.substring(0, c.length() - 1) + ",\"prevResult\":" + j.stdout() + "}";
        assertEquals(0, go("CHECK", "ctr", "eth0", withPrev).exitCode());

        // Go continues jcni's round-robin and skips jcni's reservations.
        Skel.Outcome g = go("ADD", "other", "eth0", c);
        assertTrue(g.stdout().contains("10.9.0.3/24"), g.stdout());

        // Go's DEL finds jcni's files (it reads every file in the network directory).
        assertEquals(0, go("DEL", "ctr", "eth0", c).exitCode());
        assertFalse(Files.exists(tmp.resolve("n1/10.9.0.2")));
        assertFalse(Files.exists(tmp.resolve("n1/fd00:9::2")));
        assertEquals(1, go("CHECK", "ctr", "eth0", withPrev).exitCode());
        // jcni's stale index entry is only a hint: its CHECK now fails too, and a new ADD works.
        assertEquals(1, jcni("CHECK", "ctr", "eth0", withPrev).exitCode());
        Skel.Outcome again = jcni("ADD", "ctr", "eth0", c);
        assertEquals(0, again.exitCode(), again.stdout());
        assertTrue(again.stdout().contains("10.9.0.4/24"), again.stdout());
    }
}
