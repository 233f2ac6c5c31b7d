package io.jcni.daemon.dhcp;

import static io.jcni.daemon.dhcp.DnsmasqWorld.await;
import static io.jcni.daemon.dhcp.DnsmasqWorld.sh;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jcni.testfixtures.Dirs;
import io.jcni.types.Cidr;
import io.jcni.types.IpAddr;
import io.jcni.types.Json;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * jcnid's DHCP service against a server that misbehaves ({@link ScriptedDhcpServer}, on the
 * private segment {@link DnsmasqWorld} builds, without dnsmasq): T1 = 0, a NAK after the network
 * was renumbered, a rebinding ACK for another address, a zero lease, a 9 KB offer; and 2,000
 * connections to a jcnid held to a few threads by a pids cgroup.
 */
@Tag("root")
class DhcpHostileServerTest {
    static final byte[] SERVER = {10, 77, 0, 1};
    static final byte[] FIRST = {10, 77, 0, 50};

    static ScriptedDhcpServer server(DnsmasqWorld w, ScriptedDhcpServer.Script script) {
        return new ScriptedDhcpServer("/var/run/netns/" + w.server, "br0", SERVER, script);
    }

    static String link(String ns) throws Exception {
        Process p = new ProcessBuilder("ip", "-n", DnsmasqWorld.nsName(ns), "-o", "link", "show", "eth0").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    static boolean up(String ns) throws Exception {
        String l = link(ns);
        return l.contains("<") && Arrays.asList(l.substring(l.indexOf('<') + 1, l.indexOf('>')).split(",")).contains("UP");
    }

    static String status(DnsmasqWorld w) throws Exception {
        return DnsmasqWorld.exec(w.jcnidStatus(), Map.of(), "").stdout();
    }

    static String conf(DnsmasqWorld w) {
        return DhcpDnsmasqTest.conf(w, ", \"timeout\": \"5s\"");
    }

    @Test
    void aT1OfZeroDoesNotMakeARenewalStorm() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, ScriptedDhcpServer.options(SERVER, 120, 0, 0)))) {
                DhcpDnsmasqTest.configure(ns, w.plugin("ADD", "t1zero", ns, conf(w)));
                int afterAdd = s.received(DhcpOptions.REQUEST).size();
                long window = 5;
                Thread.sleep(window * 1000);
                int renewals = s.received(DhcpOptions.REQUEST).size() - afterAdd;
                assertTrue(renewals < window, "fewer than 1 renewal a second: " + renewals + " in " + window + " s");
                assertTrue(DnsmasqWorld.read(w.jcnidLog()).contains("acquired address=10.77.0.50"), DnsmasqWorld.read(w.jcnidLog()));
                assertEquals(0, w.plugin("DEL", "t1zero", ns, conf(w)).exit());
            }
        }
    }

    @Test
    void aOneSecondLeaseIsRenewedInTimeAndAnInfiniteOneNever() throws Exception {
        byte[] second = {10, 77, 0, 51};
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String a = w.container(), b = w.container();
            Map<Integer, byte[]> oneSecond = ScriptedDhcpServer.options(SERVER, 1, -1, -1);
            Map<Integer, byte[]> infinite = ScriptedDhcpServer.options(SERVER, 0xffffffffL, -1, -1);
            try (ScriptedDhcpServer s = server(w, (m, srv) -> {
                byte[] cid = m.option(DhcpOptions.CLIENT_ID);
                boolean inf = new String(cid, StandardCharsets.UTF_8).contains("forever/");
                return srv.grant(m, inf ? second : FIRST, inf ? infinite : oneSecond);
            })) {
                DhcpDnsmasqTest.configure(a, w.plugin("ADD", "short", a, conf(w)));
                DhcpDnsmasqTest.configure(b, w.plugin("ADD", "forever", b, conf(w)));
                Thread.sleep(4000);
                List<ScriptedDhcpServer.Received> extensions = s.received(DhcpOptions.REQUEST).stream()
                        .filter(r -> !Arrays.equals(r.message().ciaddr(), DhcpMessage.ZERO)).toList();
                assertTrue(extensions.stream().allMatch(r -> Arrays.equals(r.message().ciaddr(), FIRST)),
                        "the infinite lease is never renewed");
                assertTrue(extensions.size() >= 4, "the 1 s lease renewed every half second: " + extensions.size());
                assertTrue(up(a) && up(b), link(a) + link(b));
                String st = status(w);
                assertTrue(st.contains(" leases=2 "), st + DnsmasqWorld.read(w.jcnidLog()));
                assertEquals(0, w.plugin("DEL", "short", a, conf(w)).exit());
                assertEquals(0, w.plugin("DEL", "forever", b, conf(w)).exit());
            }
        }
    }

    @Test
    void afterRenumberingTheContainerIsNotLeftOnAnAddressJcnidDoesNotHold() throws Exception {
        byte[] renumbered = {10, 77, 0, (byte) 150};
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            Map<Integer, byte[]> opts = ScriptedDhcpServer.options(SERVER, 120, 2, 100);
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, opts))) {
                DnsmasqWorld.Out add = w.plugin("ADD", "renum", ns, conf(w));
                DhcpDnsmasqTest.configure(ns, add);
                assertTrue(up(ns));
                // The LAN is renumbered: the old address is refused, another one offered.
                s.script = (m, srv) -> {
                    boolean old = Arrays.equals(m.ciaddr(), FIRST) || Arrays.equals(m.option(DhcpOptions.REQUESTED_IP), FIRST);
                    if (m.type() == DhcpOptions.REQUEST && old) return srv.reply(m, DhcpOptions.NAK, null, Map.of());
                    return srv.grant(m, renumbered, opts);
                };
                await("eth0 set down", () -> {
                    try {
                        return !up(ns);
                    } catch (Exception e) {
                        return false;
                    }
                }, 20_000);
                await("the other address given back", () -> s.received(DhcpOptions.RELEASE).stream()
                        .anyMatch(r -> Arrays.equals(r.message().ciaddr(), renumbered)));
                String log = DnsmasqWorld.read(w.jcnidLog());
                assertTrue(log.contains("lost address=10.77.0.50"), log);
                assertTrue(status(w).contains(" leases=0 "), status(w));
                assertEquals(0, Dirs.count(w.stateDir()));
                DnsmasqWorld.Out check = w.plugin("CHECK", "renum", ns, DhcpDnsmasqTest.conf(w, "", ", \"prevResult\": " + add.stdout()));
                assertEquals(1, check.exit(), "CHECK tells the runtime: " + check.stdout());
                Thread.sleep(3000); // and it stays so: jcnid does not hold 10.77.0.150 for a container that has 10.77.0.50
                assertTrue(!up(ns), link(ns));
                assertTrue(status(w).contains(" leases=0 "), status(w));
                assertEquals(0, w.plugin("DEL", "renum", ns, conf(w)).exit());
            }
        }
    }

    @Test
    void aRebindingAckForAnotherAddressSetsTheInterfaceDown() throws Exception {
        byte[] other = {10, 77, 0, (byte) 151};
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            Map<Integer, byte[]> opts = ScriptedDhcpServer.options(SERVER, 120, 2, 3);
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, opts))) {
                DhcpDnsmasqTest.configure(ns, w.plugin("ADD", "rebind", ns, conf(w)));
                int[] extends_ = {0};
                // The granting server stops answering; at T2 "another" one answers the rebinding with another address.
                s.script = (m, srv) -> {
                    if (m.type() != DhcpOptions.REQUEST || !Arrays.equals(m.ciaddr(), FIRST)) return null;
                    return extends_[0]++ == 0 ? null : srv.reply(m, DhcpOptions.ACK, other, opts);
                };
                await("eth0 set down", () -> {
                    try {
                        return !up(ns);
                    } catch (Exception e) {
                        return false;
                    }
                }, 20_000);
                await("the other address given back", () -> s.received(DhcpOptions.RELEASE).stream()
                        .anyMatch(r -> Arrays.equals(r.message().ciaddr(), other)));
                assertTrue(status(w).contains(" leases=0 "), status(w));
            }
        }
    }

    @Test
    void aZeroLeaseIsAnAddErrorAndLeavesNothing() throws Exception {
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, ScriptedDhcpServer.options(SERVER, 0, -1, -1)))) {
                DnsmasqWorld.Out add = w.plugin("ADD", "zero", ns, conf(w));
                assertEquals(1, add.exit(), add.stdout());
                String msg = (String) Json.parseObject(add.stdout()).get("msg");
                assertEquals("dhcp: the DHCP server 10.77.0.1 granted 10.77.0.50 for 0 seconds (option 51): refused and released", msg);
                await("the RELEASE", () -> s.received(DhcpOptions.RELEASE).size() == 1);
                assertEquals(0, Dirs.count(w.stateDir()));
                assertTrue(up(ns), "ADD failed; the interface is the main plugin's to remove: " + link(ns));
            }
        }
    }

    @Test
    void aNineKilobyteOfferIsAccepted() throws Exception {
        List<DhcpOptions.Route> routes = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            routes.add(new DhcpOptions.Route(Cidr.parse("10." + (100 + i / 250) + "." + (i % 250) + ".0/25"), new IpAddr(SERVER)));
        }
        Map<Integer, byte[]> opts = ScriptedDhcpServer.options(SERVER, 120, -1, -1);
        opts.put(DhcpOptions.CLASSLESS_ROUTES, DhcpOptions.encodeClasslessRoutes(routes));
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            int[] offerBytes = {0};
            try (ScriptedDhcpServer s = server(w, (m, srv) -> {
                DhcpMessage r = srv.grant(m, FIRST, opts);
                if (r != null && r.type() == DhcpOptions.OFFER) offerBytes[0] = r.encode().length;
                return r;
            })) {
                DnsmasqWorld.Out add = w.plugin("ADD", "big", ns, conf(w));
                assertEquals(0, add.exit(), add.stdout());
                assertTrue(offerBytes[0] > 9000, "a ~9 KB offer: " + offerBytes[0]);
                assertEquals(1000, Json.asList(Json.parseObject(add.stdout()).get("routes")).size());
                assertArrayEquals(new byte[] {0x40, 0}, s.received(DhcpOptions.DISCOVER).getFirst().message().option(DhcpOptions.MAX_MESSAGE_SIZE));
                assertEquals(0, w.plugin("DEL", "big", ns, conf(w)).exit());
            }
        }
    }

    @Test
    void anOfferLongerThanOption57IsReportedAsUnreadable() throws Exception {
        List<DhcpOptions.Route> routes = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            routes.add(new DhcpOptions.Route(Cidr.parse("10." + (100 + i / 250) + "." + (i % 250) + ".0/25"), new IpAddr(SERVER)));
        }
        Map<Integer, byte[]> opts = ScriptedDhcpServer.options(SERVER, 120, -1, -1);
        opts.put(DhcpOptions.CLASSLESS_ROUTES, DhcpOptions.encodeClasslessRoutes(routes));
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, opts))) {
                DnsmasqWorld.Out add = w.plugin("ADD", "huge", ns, DhcpDnsmasqTest.conf(w, ", \"timeout\": \"2s\""));
                assertEquals(1, add.exit(), add.stdout());
                String msg = (String) Json.parseObject(add.stdout()).get("msg");
                assertTrue(msg.startsWith("dhcp: unreadable DHCPOFFER from 10.77.0.1: a message of 18"), msg);
                assertTrue(msg.contains("longer than the 16384 this client accepts (option 57)"), msg);
                assertEquals(0, Dirs.count(w.stateDir()));
            }
        }
    }

    /** jcnid in a pids cgroup with room for a few more threads; 2,000 connections; then an ADD and a status. */
    @Test
    void twoThousandConnectionsUnderAPidsLimitLeaveTheServiceServing() throws Exception {
        Path cgroup = Path.of("/sys/fs/cgroup/pids/jcni-dhcp-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        try (DnsmasqWorld w = new DnsmasqWorld()) {
            w.startJcnid();
            String ns = w.container();
            long pid = w.jcnidPid();
            Files.createDirectory(cgroup);
            List<SocketChannel> idle = new ArrayList<>();
            try (ScriptedDhcpServer s = server(w, (m, srv) -> srv.grant(m, FIRST, ScriptedDhcpServer.options(SERVER, 120, -1, -1)))) {
                long threads = threads(pid);
                Files.writeString(cgroup.resolve("pids.max"), Long.toString(threads + 12));
                Files.writeString(cgroup.resolve("cgroup.procs"), Long.toString(pid));
                for (int i = 0; i < 2000; i++) {
                    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                    ch.connect(UnixDomainSocketAddress.of(w.dhcpSocket()));
                    idle.add(ch);
                }
                DnsmasqWorld.Out add = w.plugin("ADD", "pids", ns, conf(w));
                assertEquals(0, add.exit(), add.stdout());
                String st = status(w);
                assertTrue(st.contains(" leases=1 ") && st.contains(" health=ok "), st);
                System.err.println("jcnid threads: " + threads + " before 2,000 connections and an ADD, " + threads(pid) + " after");
                assertTrue(threads(pid) <= threads + 12, "threads " + threads + " -> " + threads(pid));
                for (SocketChannel ch : idle) ch.close();
                idle.clear();
                assertEquals(0, w.plugin("DEL", "pids", ns, conf(w)).exit());
            } finally {
                for (SocketChannel ch : idle) ch.close();
                if (Files.exists(cgroup.resolve("cgroup.procs"))) {
                    for (String p : Files.readAllLines(cgroup.resolve("cgroup.procs"))) {
                        Files.writeString(Path.of("/sys/fs/cgroup/pids/cgroup.procs"), p); // back where it was
                    }
                }
                Files.deleteIfExists(cgroup);
            }
        }
    }

    static long threads(long pid) throws Exception {
        try (var s = Files.list(Path.of("/proc/" + pid + "/task"))) {
            return s.count();
        }
    }
}
