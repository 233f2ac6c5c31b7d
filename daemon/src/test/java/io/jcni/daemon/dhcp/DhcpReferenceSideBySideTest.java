package io.jcni.daemon.dhcp;

import static io.jcni.daemon.dhcp.DnsmasqWorld.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Peers;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The same scenario, on the same dnsmasq, with the reference dhcp plugin and daemon
 * (/usr/lib/cni/dhcp) beside jcni's: both get a lease and renew it at T1; after a SIGKILL and a
 * restart of its daemon, jcni's lease is renewed again and the reference's is not (its daemon keeps
 * leases in memory only, containernetworking/plugins#235), and only jcni's DEL sends a RELEASE.
 * The differences are listed in plugins/.../ipam/dhcp/README.md.
 */
@Tag("root")
@Tag("interop")
class DhcpReferenceSideBySideTest {
    static final Path REFERENCE = Path.of("/usr/lib/cni/dhcp");

    @Test
    void restartKeepsJcnisLeaseAndLosesTheReferences() throws Exception {
        Peers.requireExecutable(REFERENCE, "containernetworking-plugins");
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startDnsmasq();
            w.startJcnid();
            Path refSock = w.dir.resolve("ref.sock");
            List<String> refDaemon = List.of("ip", "netns", "exec", w.server, REFERENCE.toString(), "daemon", "-socketpath",
                    refSock.toString(), "-pidfile", w.dir.resolve("ref.pid").toString());
            Process ref = w.spawn(refDaemon, w.dir.resolve("ref.log"));
            await("the reference daemon's socket", () -> Files.exists(refSock));

            String jns = w.container(), rns = w.container();
            DnsmasqWorld.Out j = w.plugin("ADD", "jcni", jns, DhcpDnsmasqTest.conf(w, ""));
            DhcpDnsmasqTest.configure(jns, j);
            DnsmasqWorld.Out r = reference(w, "ADD", "ref", rns, refSock);
            DhcpDnsmasqTest.configure(rns, r);
            String jip = address(j), rip = address(r);
            Map<String, Object> jres = Json.parseObject(j.stdout()), rres = Json.parseObject(r.stdout());
            assertEquals(gateway(jres), gateway(rres), "the same gateway, from option 3");
            assertEquals(Json.asObject(Json.asList(jres.get("ips")).getFirst()).keySet(),
                    Json.asObject(Json.asList(rres.get("ips")).getFirst()).keySet(), "the same ips fields");
            // The reference asks only for mask and router: no option 121 routes, no DNS.
            assertEquals(List.of(Map.of("dst", "0.0.0.0/0", "gw", DnsmasqWorld.SUBNET + ".1")), rres.get("routes"));

            String jack = "DHCPACK(br0) " + jip + " ", rack = "DHCPACK(br0) " + rip + " ";
            await("both renewed at T1", () -> w.count(jack) >= 2 && w.count(rack) >= 2);

            w.killJcnid();
            ref.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(refSock); // the reference daemon does not remove a stale socket itself
            long jBefore = w.count(jack), rBefore = w.count(rack);
            w.startJcnid();
            w.spawn(refDaemon, w.dir.resolve("ref.log"));
            await("the reference daemon's socket again", () -> Files.exists(refSock));
            // T1 is 4 s and T2 7 s: 9 s cover a renewal and a rebinding of each.
            await("jcni's lease renewed after the restart", () -> w.count(jack) > jBefore);
            Thread.sleep(9_000);
            assertEquals(rBefore, w.count(rack), "the restarted reference daemon no longer renews its lease");
            assertTrue(w.count(jack) > jBefore + 1);

            assertEquals(0, w.plugin("DEL", "jcni", jns, DhcpDnsmasqTest.conf(w, "")).exit());
            assertEquals(0, reference(w, "DEL", "ref", rns, refSock).exit(), "the reference DEL succeeds, releasing nothing");
            await("jcni's RELEASE", () -> w.count("DHCPRELEASE(br0) " + jip) == 1);
            Thread.sleep(1_000);
            assertEquals(0, w.count("DHCPRELEASE(br0) " + rip), "the reference daemon forgot the lease: no RELEASE");
        }
    }

    static DnsmasqWorld.Out reference(DnsmasqWorld w, String cmd, String cid, String ns, Path sock) throws Exception {
        String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"dhcpnet\",\"type\":\"bridge\",\"ipam\":{\"type\":\"dhcp\","
                + "\"daemonSocketPath\":\"" + sock + "\"}}";
        return DnsmasqWorld.exec(List.of(REFERENCE.toString()), Map.of("CNI_COMMAND", cmd, "CNI_CONTAINERID", cid,
                "CNI_NETNS", ns, "CNI_IFNAME", "eth0", "CNI_PATH", "/usr/lib/cni"), conf);
    }

    static String address(DnsmasqWorld.Out add) {
        String cidr = (String) Json.asObject(Json.asList(Json.parseObject(add.stdout()).get("ips")).getFirst()).get("address");
        return cidr.substring(0, cidr.indexOf('/'));
    }

    static Object gateway(Map<String, Object> res) {
        return Json.asObject(Json.asList(res.get("ips")).getFirst()).get("gateway");
    }
}
