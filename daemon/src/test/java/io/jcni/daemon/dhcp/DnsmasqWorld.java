package io.jcni.daemon.dhcp;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Jvm;
import io.jcni.testfixtures.Proc;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A private DHCP segment for root tests: a "server" netns with a real dnsmasq (its own lease file,
 * log and pid file, DNS off) on one end of a veth per container, the other end {@code eth0} in the
 * container's netns; jcnid and plugins as separate JVMs. Names carry a random suffix; everything is
 * stopped by pid and deleted on {@link #close()}.
 */
final class DnsmasqWorld implements AutoCloseable {
    static final String SUBNET = "10.77.0";
    private static final SecureRandom RANDOM = new SecureRandom();

    final String id;
    final String server;
    final Path dir;
    final List<String> containers = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();
    private Process dnsmasq;
    private Process jcnid;

    DnsmasqWorld() throws Exception {
        byte[] b = new byte[3];
        RANDOM.nextBytes(b);
        id = HexFormat.of().formatHex(b);
        server = "i11d-" + id + "-s";
        dir = Files.createTempDirectory("i11d-dhcp");
        sh("ip", "netns", "add", server);
        sh("ip", "-n", server, "link", "add", "br0", "type", "bridge");
        sh("ip", "-n", server, "addr", "add", SUBNET + ".1/24", "dev", "br0");
        sh("ip", "-n", server, "link", "set", "br0", "up");
        sh("ip", "-n", server, "link", "set", "lo", "up");
    }

    /** A container netns whose eth0 is a veth into the server's bridge; returns the netns path. */
    String container() throws Exception {
        String name = "i11d-" + id + "-c" + containers.size();
        String peer = "v" + containers.size();
        sh("ip", "netns", "add", name);
        containers.add(name);
        sh("ip", "-n", server, "link", "add", peer, "type", "veth", "peer", "name", "eth0", "netns", name);
        sh("ip", "-n", server, "link", "set", peer, "master", "br0", "up");
        return "/var/run/netns/" + name;
    }

    static String nsName(String path) {
        return Path.of(path).getFileName().toString();
    }

    void deleteContainer(String path) throws Exception {
        String name = Path.of(path).getFileName().toString();
        sh("ip", "netns", "del", name);
        containers.remove(name);
    }

    /** dnsmasq on br0: a 2-minute lease (its minimum), T1 4 s, T2 7 s, router, DNS and classless routes. */
    void startDnsmasq() throws Exception {
        dnsmasq = new ProcessBuilder("ip", "netns", "exec", server, "dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
                "--port=0", "--no-ping", "--user=root", "--group=root", "--interface=br0", "--bind-interfaces",
                "--dhcp-range=" + SUBNET + ".50," + SUBNET + ".99,255.255.255.0,2m",
                "--dhcp-option=option:T1,4", "--dhcp-option=option:T2,7",
                "--dhcp-option=option:router," + SUBNET + ".1", "--dhcp-option=option:dns-server," + SUBNET + ".53",
                "--dhcp-option=option:domain-name,i11d.test",
                "--dhcp-option=option:classless-static-route,10.200.0.0/16," + SUBNET + ".254,0.0.0.0/0," + SUBNET + ".1",
                "--dhcp-leasefile=" + dir.resolve("dnsmasq.leases"), "--pid-file=" + dir.resolve("dnsmasq.pid"),
                "--log-dhcp", "--log-facility=" + dir.resolve("dnsmasq.log"))
                .redirectErrorStream(true).redirectOutput(dir.resolve("dnsmasq.out").toFile()).start();
        processes.add(dnsmasq);
        await("dnsmasq to start", () -> Files.exists(dir.resolve("dnsmasq.log")) && log().contains("DHCP, IP range"));
    }

    String log() {
        return read(dir.resolve("dnsmasq.log"));
    }

    String leases() {
        return read(dir.resolve("dnsmasq.leases"));
    }

    /** How often dnsmasq logged {@code what} (e.g. "DHCPACK(br0) 10.77.0.57"). */
    long count(String what) {
        return log().lines().filter(l -> l.contains(what)).count();
    }

    Path jcnidSocket() {
        return dir.resolve("jcnid.sock");
    }

    Path dhcpSocket() {
        return dir.resolve("dhcp.sock");
    }

    Path stateDir() {
        return dir.resolve("state");
    }

    Path jcnidLog() {
        return dir.resolve("jcnid.log");
    }

    /** jcnid with the DHCP service, in its own JVM, logging to jcnid.log (appended across restarts). */
    void startJcnid() throws Exception {
        List<String> cmd = Jvm.command(Launcher.Kind.DAEMON, "io.jcni.daemon.Jcnid", "start", "--foreground", "--socket",
                jcnidSocket().toString(), "--pid-file", dir.resolve("jcnid.pid").toString(), "--dhcp", "--dhcp-socket",
                dhcpSocket().toString(), "--dhcp-state-dir", stateDir().toString());
        jcnid = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(jcnidLog().toFile())).start();
        processes.add(jcnid);
        await("jcnid's DHCP socket", () -> Files.exists(dhcpSocket()));
    }

    long jcnidPid() {
        return jcnid.pid();
    }

    void killJcnid() throws Exception {
        jcnid.destroyForcibly(); // SIGKILL: no shutdown hook, no clean stop
        jcnid.waitFor(10, TimeUnit.SECONDS);
    }

    record Out(String stdout, int exit) {}

    /** The dhcp plugin run standalone (its own JVM), as a runtime runs it. */
    Out plugin(String command, String containerId, String netns, String conf) throws Exception {
        List<String> cmd = Jvm.command(Launcher.Kind.PLUGIN, "io.jcni.plugins.PluginMain", "dhcp");
        return exec(cmd, Map.of("CNI_COMMAND", command, "CNI_CONTAINERID", containerId, "CNI_NETNS", netns,
                "CNI_IFNAME", "eth0", "CNI_PATH", "/nonexistent"), conf);
    }

    static Out exec(List<String> cmd, Map<String, String> env, String stdin) {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(env);
        Proc.Out o = Proc.run(pb, stdin, 60);
        return new Out(o.out(), o.rc());
    }

    /** {@code jcnid status} against this world's jcnid (jcnid's launcher runs every jcnid command). */
    List<String> jcnidStatus() {
        return Jvm.command(Launcher.Kind.DAEMON, "io.jcni.daemon.Jcnid", "status", "--socket", jcnidSocket().toString());
    }

    /** A process of the test's own (the reference daemon): stopped on close. */
    Process spawn(List<String> cmd, Path log) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        processes.add(p);
        return p;
    }

    static void await(String what, BooleanSupplier cond) throws InterruptedException {
        await(what, cond, 20_000);
    }

    static void await(String what, BooleanSupplier cond, long millis) throws InterruptedException {
        long end = System.nanoTime() + millis * 1_000_000;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(100);
        }
    }

    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }

    static void sh(String... cmd) {
        Proc.ok(cmd);
    }

    @Override
    public void close() throws Exception {
        // For the report when something failed: what both sides said.
        System.err.println("---- jcnid.log\n" + read(jcnidLog()) + "---- dnsmasq.log\n" + log());
        for (Process p : processes.reversed()) {
            p.destroy(); // dnsmasq: SIGTERM; `ip netns exec` execs it, so the pid is dnsmasq's
            if (!p.waitFor(5, TimeUnit.SECONDS)) p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        for (String c : List.copyOf(containers)) {
            try {
                sh("ip", "netns", "del", c);
            } catch (AssertionError ignored) {
                // already gone
            }
        }
        try {
            sh("ip", "netns", "del", server);
        } catch (AssertionError ignored) {
            // already gone
        }
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
