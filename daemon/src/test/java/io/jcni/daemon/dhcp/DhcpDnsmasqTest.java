package io.jcni.daemon.dhcp;

import static io.jcni.daemon.dhcp.DnsmasqWorld.await;
import static io.jcni.daemon.dhcp.DnsmasqWorld.sh;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Dirs;
import io.jcni.types.Json;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The dhcp IPAM plugin and jcnid's DHCP service against a real dnsmasq on a private segment:
 * lease in the result, renewal at T1, renewal going on after jcnid is killed with SIGKILL and
 * restarted, RELEASE on DEL, GC, DEL without the netns, and the errors without a server or jcnid.
 */
@Tag("root")
@Tag("interop")
class DhcpDnsmasqTest {

    static String conf(DnsmasqWorld w, String ipamExtra) {
        return conf(w, ipamExtra, "");
    }

    static String conf(DnsmasqWorld w, String ipamExtra, String topExtra) {
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"dhcpnet\",\"type\":\"bridge\",\"ipam\":{\"type\":\"dhcp\","
                + "\"daemonSocketPath\":\"" + w.dhcpSocket() + "\"" + ipamExtra + "}" + topExtra + "}";
    }

    /** What the main plugin does with the result: the address on eth0 (renewals and RELEASE are unicast from it). */
    static void configure(String ns, DnsmasqWorld.Out add) throws Exception {
        assertEquals(0, add.exit(), add.stdout());
        Map<String, Object> ip = Json.asObject(Json.asList(Json.parseObject(add.stdout()).get("ips")).getFirst());
        sh("ip", "-n", DnsmasqWorld.nsName(ns), "addr", "add", (String) ip.get("address"), "dev", "eth0");
    }

    @Test
    void leaseIsRenewedAcrossAJcnidKillAndReleasedOnDel() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startDnsmasq();
            w.startJcnid();
            String ns = w.container();
            DnsmasqWorld.Out add = w.plugin("ADD", "ctr1", ns, conf(w, ""));
            assertEquals(0, add.exit(), add.stdout());
            Map<String, Object> r = Json.parseObject(add.stdout());
            Map<String, Object> ip = Json.asObject(Json.asList(r.get("ips")).getFirst());
            String cidr = (String) ip.get("address");
            String addr = cidr.substring(0, cidr.indexOf('/'));
            assertTrue(cidr.startsWith(DnsmasqWorld.SUBNET + ".") && cidr.endsWith("/24"), cidr);
            assertEquals(DnsmasqWorld.SUBNET + ".1", ip.get("gateway"));
            assertEquals(List.of(Map.of("dst", "10.200.0.0/16", "gw", DnsmasqWorld.SUBNET + ".254"),
                    Map.of("dst", "0.0.0.0/0", "gw", DnsmasqWorld.SUBNET + ".1")), r.get("routes"), "option 121");
            Map<String, Object> dns = Json.asObject(r.get("dns"));
            assertEquals(List.of(DnsmasqWorld.SUBNET + ".53"), dns.get("nameservers"));
            assertEquals("i11d.test", dns.get("domain"));
            assertTrue(w.leases().contains(" " + addr + " "), w.leases());

            configure(ns, add);
            String ack = "DHCPACK(br0) " + addr + " ";
            await("a renewal at T1 (4 s)", () -> w.count(ack) >= 2);

            String st = DnsmasqWorld.exec(w.jcnidStatus(), Map.of(), "").stdout();
            assertTrue(st.contains("dhcp " + w.dhcpSocket() + " leases=1 state_dir=" + w.stateDir()), st);

            w.killJcnid();
            long before = w.count(ack);
            w.startJcnid();
            await("a renewal by the restarted jcnid", () -> w.count(ack) > before);
            assertTrue(DnsmasqWorld.read(w.jcnidLog()).contains("reloaded address=" + addr), DnsmasqWorld.read(w.jcnidLog()));

            DnsmasqWorld.Out check = w.plugin("CHECK", "ctr1", ns, conf(w, "", ", \"prevResult\": " + add.stdout()));
            assertEquals(0, check.exit(), check.stdout());

            DnsmasqWorld.Out del = w.plugin("DEL", "ctr1", ns, conf(w, ""));
            assertEquals(0, del.exit(), del.stdout());
            await("DHCPRELEASE", () -> w.count("DHCPRELEASE(br0) " + addr) == 1);
            await("the lease gone from dnsmasq's lease file", () -> !w.leases().contains(" " + addr + " "));
            assertEquals(0, Dirs.count(w.stateDir()), "nothing left in the state dir");
            assertEquals(0, w.plugin("DEL", "ctr1", ns, conf(w, "")).exit(), "DEL again");
        }
    }

    @Test
    void gcReleasesGoneAttachmentsAndDelWorksWithoutTheNetns() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startDnsmasq();
            w.startJcnid();
            String a = w.container(), b = w.container();
            configure(a, w.plugin("ADD", "keep", a, conf(w, "")));
            configure(b, w.plugin("ADD", "drop", b, conf(w, "")));
            String gc = "{\"cniVersion\":\"1.1.0\",\"name\":\"dhcpnet\",\"type\":\"dhcp\",\"ipam\":{\"type\":\"dhcp\",\"daemonSocketPath\":\""
                    + w.dhcpSocket() + "\"},\"cni.dev/valid-attachments\":[{\"containerID\":\"keep\",\"ifname\":\"eth0\"}]}";
            assertEquals(0, w.plugin("GC", "", "", gc).exit());
            await("GC's DHCPRELEASE", () -> w.count("DHCPRELEASE(br0)") == 1);
            assertEquals(1, Dirs.count(w.stateDir()));

            w.deleteContainer(a);
            DnsmasqWorld.Out del = w.plugin("DEL", "keep", a, conf(w, ""));
            assertEquals(0, del.exit(), "DEL succeeds when the netns is gone: " + del.stdout());
            assertEquals(0, Dirs.count(w.stateDir()));
        }
    }

    @Test
    void noServerIsAClearErrorWithinTheTimeoutAndLeavesNothing() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            DnsmasqWorld.Out add = w.plugin("ADD", "ctr1", ns, conf(w, ", \"timeout\": \"2s\""));
            assertEquals(1, add.exit());
            Map<String, Object> err = Json.parseObject(add.stdout());
            assertTrue(((String) err.get("msg")).contains("no DHCPOFFER"), add.stdout());
            assertEquals(0, Dirs.count(w.stateDir()));
        }
    }

    @Test
    void withoutJcnidTheErrorSaysSo() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            String ns = w.container();
            DnsmasqWorld.Out add = w.plugin("ADD", "ctr1", ns, conf(w, ""));
            assertEquals(1, add.exit());
            Map<String, Object> err = Json.parseObject(add.stdout());
            assertEquals(11L, err.get("code"));
            assertTrue(((String) err.get("msg")).contains("jcnid's DHCP service is not running"), add.stdout());
            assertFalse(Files.exists(w.stateDir()));
        }
    }
}
