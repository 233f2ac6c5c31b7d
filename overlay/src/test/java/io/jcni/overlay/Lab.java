package io.jcni.overlay;

import io.jcni.common.Launcher;
import io.jcni.linux.Netns;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.meta.flannel.SubnetFile;
import io.jcni.plugins.skel.Skel;
import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testfixtures.Jvm;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import io.jcni.types.Cidr;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A multi-host lab on testfixtures' {@link World}, torn down by {@link #close}: the world's host
 * namespace is the "lab" one, holding the underlay bridge and a real etcd (Debian's etcd-server) on
 * 192.168.77.1, and N "host" netns attached to the bridge by veth (eth0 = 192.168.77.(10+i)). Each
 * host runs a real jcnid with {@code --overlay} in its namespace ({@link JcnidProcess}: its own socket,
 * log and subnet.env); pods are netns with a veth to the host's bridge cni0. Every process is started
 * and stopped by pid; names are {@code jo-ROLE-ID}.
 */
final class Lab implements AutoCloseable {
    static final String ETCD_IP = "192.168.77.1";
    static final String ETCD = "http://" + ETCD_IP + ":2379";

    private final World world;
    final String sfx;
    final String labNs;
    final String prefix;
    final Path dir;
    private final Map<Integer, JcnidProcess> agents = new LinkedHashMap<>();
    private Process etcd;

    Lab() throws IOException {
        world = new World("jo");
        sfx = world.id;
        labNs = world.host;
        prefix = "/jcni-lab-" + sfx + "/network";
        dir = world.dir;
    }

    String host(int i) {
        return world.name("h" + i);
    }

    String pod(int i) {
        return world.name("p" + i);
    }

    static String hostIp(int i) {
        return "192.168.77." + (10 + i);
    }

    /** The underlay and etcd; then {@link #addHost} for each host. */
    void start(String networkConfig) throws Exception {
        World.bridge(labNs, "ul", ETCD_IP + "/24");
        startEtcd();
        waitFor("etcd answers", Duration.ofSeconds(30), () -> etcdctl("put", prefix + "/config", networkConfig).exit() == 0);
    }

    /** Starts etcd (again: same data directory) in the lab netns. */
    void startEtcd() throws IOException {
        etcd = world.start(labNs, List.of("etcd", "--name", "lab",
                "--data-dir", dir.resolve("etcd").toString(),
                "--listen-client-urls", ETCD, "--advertise-client-urls", ETCD,
                "--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
                "--initial-cluster", "lab=http://127.0.0.1:2380"), dir.resolve("etcd.log"));
    }

    /** SIGSTOP / SIGCONT to etcd (by pid: nsenter execs etcd, so the process is etcd itself). */
    void freezeEtcd(boolean frozen) throws Exception {
        sh("kill", frozen ? "-STOP" : "-CONT", Long.toString(etcd.pid()));
    }

    void killEtcd() throws InterruptedException {
        etcd.destroyForcibly();
        etcd.waitFor(10, TimeUnit.SECONDS);
    }

    void addHost(int i) throws Exception {
        String h = host(i);
        netns(h);
        World.attach(labNs, "ul", "h" + i, h, "eth0");
        World.ip(h, "addr", "add", hostIp(i) + "/24", "dev", "eth0");
        World.sysctl(h, "net.ipv4.ip_forward=1");
        Files.createDirectories(dir.resolve(h));
    }

    /** Host i's IPv6 underlay address (eth0, fd77::(10+i)/64). */
    static String hostIp6(int i) {
        return "fd77::" + (10 + i);
    }

    /** Gives host i's eth0 its IPv6 address (without DAD, usable at once) and turns IPv6 forwarding on in the host's namespace. */
    void enableIpv6(int i) throws Exception {
        String h = host(i);
        sh("ip", "-n", h, "-6", "addr", "add", hostIp6(i) + "/64", "dev", "eth0", "nodad");
        World.sysctl(h, "net.ipv6.conf.all.forwarding=1");
    }

    /** subnet.env of host i as text, once written. */
    String awaitSubnetEnvText(int i) throws Exception {
        try {
            waitFor("subnet.env of host " + i, Duration.ofSeconds(60), () -> Files.isRegularFile(subnetFile(i)));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + log(i), e);
        }
        return Files.readString(subnetFile(i));
    }

    /**
     * IPv6 for host i's pod: cni0 gets {@code subnet6}'s ::1, the pod's eth0 its ::2 and a default
     * route via ::1. With {@code mtu} &gt; 0 the pod is made here (an IPv6-only network: no
     * {@link #addPod}), else it is {@link #addPod}'s. Returns the pod's address.
     */
    String addPod6(int i, Cidr subnet6, int mtu) throws Exception {
        String h = host(i), p = pod(i);
        String gw = subnet6.network().next().toString(), ip = subnet6.network().next().next().toString();
        if (mtu > 0) {
            sh("ip", "-n", h, "link", "add", "cni0", "type", "bridge");
            sh("ip", "-n", h, "link", "set", "cni0", "up");
            netns(p);
            sh("ip", "-n", h, "link", "add", "vp", "mtu", Integer.toString(mtu), "type", "veth", "peer", "name", "eth0", "mtu", Integer.toString(mtu),
                    "netns", p);
            sh("ip", "-n", h, "link", "set", "vp", "master", "cni0", "up");
            sh("ip", "-n", p, "link", "set", "eth0", "up");
        }
        sh("ip", "-n", h, "-6", "addr", "add", gw + "/" + subnet6.prefix(), "dev", "cni0", "nodad");
        sh("ip", "-n", p, "-6", "addr", "add", ip + "/" + subnet6.prefix(), "dev", "eth0", "nodad");
        sh("ip", "-n", p, "-6", "route", "add", "default", "via", gw);
        return ip;
    }

    /** Host i's jcnid socket. */
    Path socket(int i) {
        return dir.resolve(host(i)).resolve("jcnid.sock");
    }

        Path subnetFile(int i) {
        return dir.resolve(host(i)).resolve("subnet.env");
    }

    /** {@code cmd} run inside host i's namespace (nsenter: the command keeps its own pid for stopping it). */
    List<String> inHost(int i, List<String> cmd) {
        return World.inNs(host(i), cmd);
    }

    /** Starts host i's jcnid --overlay (a separate JVM inside the host netns). */
    void startAgent(int i, String... extra) throws IOException {
        startAgentOn(i, List.of("--iface", "eth0"), extra);
    }

    /** The same, choosing the underlay with {@code underlayFlags} (--iface, --iface-regex, --iface-can-reach) instead of {@code --iface eth0}. */
    void startAgentOn(int i, List<String> underlayFlags, String... extra) throws IOException {
        Path hd = dir.resolve(host(i));
        List<String> options = new ArrayList<>(List.of("--overlay", "--etcd-endpoints", ETCD, "--etcd-prefix", prefix,
                "--subnet-file", subnetFile(i).toString(), "--subnet-lease-ttl", "3", "--ip-masq"));
        options.addAll(underlayFlags);
        options.addAll(List.of(extra));
        agents.put(i, JcnidProcess.start(world, host(i), socket(i), hd.resolve("jcnid.log"), options.toArray(String[]::new)));
    }

    void killAgent(int i) throws InterruptedException {
        agents.remove(i).kill();
    }

    /** SIGTERM: the daemon's clean shutdown (releases the lease). */
    void stopAgent(int i) throws InterruptedException {
        agents.remove(i).stop();
    }

    String log(int i) {
        try {
            return Files.readString(dir.resolve(host(i)).resolve("jcnid.log"));
        } catch (IOException e) {
            return "";
        }
    }

    SubnetFile awaitSubnetEnv(int i) throws Exception {
        waitFor("subnet.env of host " + i + "\n" + log(i), Duration.ofSeconds(60), () -> Files.isRegularFile(subnetFile(i)));
        return SubnetEnv.read(subnetFile(i));
    }

    /** A pod on host i: bridge cni0 with the subnet's .1, the pod's eth0 with .(1+n) and a default route. */
    String addPod(int i, SubnetFile env) throws Exception {
        String h = host(i), p = pod(i);
        String gw = env.subnet().network().next().toString();
        String ip = env.subnet().network().next().next().toString();
        int len = env.subnet().prefix();
        String mtu = Integer.toString(env.mtu());
        sh("ip", "-n", h, "link", "add", "cni0", "type", "bridge");
        sh("ip", "-n", h, "addr", "add", gw + "/" + len, "dev", "cni0");
        sh("ip", "-n", h, "link", "set", "cni0", "up");
        netns(p);
        sh("ip", "-n", h, "link", "add", "vp", "mtu", mtu, "type", "veth", "peer", "name", "eth0", "mtu", mtu, "netns", p);
        sh("ip", "-n", h, "link", "set", "vp", "master", "cni0", "up");
        sh("ip", "-n", p, "addr", "add", ip + "/" + len, "dev", "eth0");
        sh("ip", "-n", p, "link", "set", "eth0", "up");
        sh("ip", "-n", p, "route", "add", "default", "via", gw);
        return ip;
    }

    /** A pod on each host of {@code envs} ({@link #addPod}); the pods' addresses by host. */
    Map<Integer, String> addPods(Map<Integer, SubnetFile> envs) throws Exception {
        Map<Integer, String> pods = new LinkedHashMap<>();
        for (var e : envs.entrySet()) pods.put(e.getKey(), addPod(e.getKey(), e.getValue()));
        return pods;
    }

    /**
     * Every pod reaches every other (waiting up to 20 s for each path), a packet of the full pod
     * {@code mtu} with DF set crosses, and one byte more does not (pod 1 to pod 2).
     */
    void assertPodsReachEachOther(Map<Integer, String> pods, int mtu) throws Exception {
        for (int a : pods.keySet()) {
            for (int b : pods.keySet()) {
                if (a == b) continue;
                String to = pods.get(b);
                waitFor("pod " + a + " -> pod " + b + "\n" + log(a), Duration.ofSeconds(20), () -> ping(pod(a), to, -1));
                if (!ping(pod(a), to, mtu - 28)) throw new AssertionError("a full-size packet with DF set crosses: " + a + " -> " + b);
            }
        }
        if (ping(pod(1), pods.get(2), mtu - 27)) throw new AssertionError("one byte more does not fit in the pod MTU");
    }

    /**
     * Hosts 1..{@code hosts}, healthy since {@code agentsStarted} (System.nanoTime() once their
     * agents run: subnet.env written), lacked nothing at the agents' route check: waits until it has run at least
     * once (its period, 10 s, and the watchdog's round, 1 s, after the agent started) and finds
     * no {@code remote recovered} in their logs. A check that took a healthy entry for missing
     * would re-add every remote every 10 s.
     */
    void assertRouteCheckFoundNothingMissing(int hosts, long agentsStarted) throws Exception {
        long dueNanos = agentsStarted + RemoteHosts.CHECK_EVERY_NANOS + 2_000_000_000L, wait = dueNanos - System.nanoTime();
        if (wait > 0) Thread.sleep(wait / 1_000_000 + 1);
        for (int i = 1; i <= hosts; i++) {
            if (log(i).contains("msg=\"remote recovered\"")) throw new AssertionError("host " + i + " found a healthy entry missing\n" + log(i));
        }
    }

    /**
     * CNI_PATH for in-process plugin runs: launchers for jcni's plugins carrying jcni's marker, so
     * the flannel plugin's delegates (bridge, host-local) run in the same JVM and thread.
     */
    Path cniBin() throws IOException {
        Path bin = dir.resolve("bin");
        if (Files.isDirectory(bin)) return bin;
        Files.createDirectories(bin);
        for (String t : List.of("bridge", "host-local", "flannel", "loopback")) {
            Jvm.launcher(bin.resolve(t), Launcher.Kind.PLUGIN, "the overlay lab", "io.jcni.plugins.PluginMain " + t);
        }
        return bin;
    }

    /** Runs the flannel plugin in-process inside host i's namespace for the pod netns {@code pod}. */
    io.jcni.plugins.skel.Skel.Outcome flannel(int i, String command, String pod, String conf) throws Exception {
        Map<String, String> env = new java.util.HashMap<>(Map.of("CNI_COMMAND", command, "CNI_CONTAINERID", "c-" + pod,
                "CNI_NETNS", "/var/run/netns/" + pod, "CNI_IFNAME", "eth0", "CNI_PATH", cniBin().toString()));
        try (Netns ns = Netns.open("/var/run/netns/" + host(i))) {
            return ns.run(() -> Skel.run(PluginRegistry.lookup("flannel"), env, conf.getBytes(StandardCharsets.UTF_8),
                    PluginRegistry.context(System.err)));
        }
    }

    /** The flannel network config for host i (its own subnet file, delegate and IPAM state under the lab dir). */
    String flannelConf(int i, int waitSeconds) {
        Path hd = dir.resolve(host(i));
        return "{\"cniVersion\":\"1.0.0\",\"name\":\"lab\",\"type\":\"flannel\",\"subnetFile\":\"" + subnetFile(i)
                + "\",\"dataDir\":\"" + hd.resolve("flannel") + "\",\"subnetFileWait\":" + waitSeconds
                + ",\"ipam\":{\"dataDir\":\"" + hd.resolve("ipam") + "\"}}";
    }

    /** One ping from pod/host netns {@code ns}; {@code size} -1 for the default, else with DF set. */
    boolean ping(String ns, String ip, int size) {
        List<String> cmd = new ArrayList<>(List.of("ping", "-c1", "-W1"));
        if (size >= 0) cmd.addAll(List.of("-M", "do", "-s", Integer.toString(size)));
        cmd.add(ip);
        return World.in(ns, cmd.toArray(String[]::new)).rc() == 0;
    }

    Out etcdctl(String... args) throws Exception {
        List<String> cmd = World.exec(labNs, List.of("env", "ETCDCTL_API=3", "etcdctl",
                "--endpoints", ETCD, "--dial-timeout", "2s", "--command-timeout", "5s"));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    void netns(String name) {
        world.namespace(name);
    }

    record Out(String stdout, int exit) {}

    /** {@code cmd} with stderr in its stdout, within 30 s (testfixtures' Proc). */
    static Out run(List<String> cmd) {
        Proc.Out o = Proc.run(cmd);
        return new Out(o.out(), o.rc());
    }

    static String sh(String... cmd) {
        return Proc.ok(cmd);
    }

    static void waitFor(String what, Duration max, BooleanSupplierX cond) throws Exception {
        Await.until(what, max, cond::getAsBoolean);
    }

    /** A condition that may throw. */
    interface BooleanSupplierX {
        boolean getAsBoolean() throws Exception;
    }

    @Override
    public void close() throws InterruptedException {
        if (etcd != null && etcd.isAlive()) {
            try {
                freezeEtcd(false); // a test that failed while etcd was stopped
            } catch (Exception ignored) {
                // best effort
            }
        }
        try {
            // SIGKILL, not the clean stop: a lease release to an etcd a test killed would only wait.
            for (JcnidProcess agent : agents.values()) agent.kill();
        } finally {
            world.close();
        }
    }
}
