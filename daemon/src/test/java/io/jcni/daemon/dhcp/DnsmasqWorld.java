package io.jcni.daemon.dhcp;

import io.jcni.common.Launcher;
import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testfixtures.Jvm;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A private DHCP segment for root tests, on testfixtures' {@link World}: its host namespace is the
 * "server" with a real dnsmasq (its own lease file, log and pid file, DNS off) on bridge br0, one
 * veth per container into it ({@code eth0} in the container's netns); jcnid ({@link JcnidProcess})
 * and plugins as separate JVMs. The world stops every process by pid and deletes everything on
 * {@link #close()}.
 */
final class DnsmasqWorld implements AutoCloseable {
    static final String SUBNET = "10.77.0";

    private final World world;
    final String server;
    final Path dir;
    private int containers;
    private JcnidProcess jcnid;

    DnsmasqWorld() throws Exception {
        world = new World("i11d");
        server = world.host;
        dir = world.dir;
        World.bridge(server, "br0", SUBNET + ".1/24");
    }

    /** A container netns whose eth0 is a veth into the server's bridge; returns the netns path. */
    String container() {
        String ns = world.container();
        World.veth(server, "v" + containers++, ns, "eth0");
        World.ip(server, "link", "set", "v" + (containers - 1), "master", "br0");
        return ns;
    }

    static String nsName(String path) {
        return World.nsName(path);
    }

    void deleteContainer(String path) {
        world.deleteNamespace(path);
    }

    /** dnsmasq on br0: a 2-minute lease (its minimum), T1 4 s, T2 7 s, router, DNS and classless routes. */
    void startDnsmasq() throws Exception {
        world.start(new ProcessBuilder(World.exec(server, List.of("dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null",
                "--port=0", "--no-ping", "--user=root", "--group=root", "--interface=br0", "--bind-interfaces",
                "--dhcp-range=" + SUBNET + ".50," + SUBNET + ".99,255.255.255.0,2m",
                "--dhcp-option=option:T1,4", "--dhcp-option=option:T2,7",
                "--dhcp-option=option:router," + SUBNET + ".1", "--dhcp-option=option:dns-server," + SUBNET + ".53",
                "--dhcp-option=option:domain-name,i11d.test",
                "--dhcp-option=option:classless-static-route,10.200.0.0/16," + SUBNET + ".254,0.0.0.0/0," + SUBNET + ".1",
                "--dhcp-leasefile=" + dir.resolve("dnsmasq.leases"), "--pid-file=" + dir.resolve("dnsmasq.pid"),
                "--log-dhcp", "--log-facility=" + dir.resolve("dnsmasq.log"))))
                .redirectErrorStream(true).redirectOutput(dir.resolve("dnsmasq.out").toFile()));
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
        if (jcnid != null) {
            jcnid.restart();
        } else {
            jcnid = JcnidProcess.start(world, null, jcnidSocket(), jcnidLog(), "--pid-file", dir.resolve("jcnid.pid").toString(), "--dhcp",
                    "--dhcp-socket", dhcpSocket().toString(), "--dhcp-state-dir", stateDir().toString());
        }
        jcnid.awaitFile(dhcpSocket(), Duration.ofSeconds(20));
    }

    long jcnidPid() {
        return jcnid.pid();
    }

    void killJcnid() throws Exception {
        jcnid.kill(); // SIGKILL: no shutdown hook, no clean stop
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
        return jcnid.control("status");
    }

    /** A process of the test's own (the reference daemon): stopped on close. */
    Process spawn(List<String> cmd, Path log) throws IOException {
        return world.start(null, cmd, log);
    }

    static void await(String what, BooleanSupplier cond) throws Exception {
        await(what, cond, 20_000);
    }

    static void await(String what, BooleanSupplier cond, long millis) throws Exception {
        Await.until(what, Duration.ofMillis(millis), cond::getAsBoolean);
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
    public void close() {
        // For the report when something failed: what both sides said.
        System.err.println("---- jcnid.log\n" + read(jcnidLog()) + "---- dnsmasq.log\n" + log());
        world.close();
    }
}
