package io.jcni.testsuite;

import io.jcni.testfixtures.Await;
import io.jcni.testfixtures.JcnidProcess;
import io.jcni.testfixtures.World;
import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A lab of Docker hosts for cluster networks ({@code -o jcni.cluster=NAME}), built in namespaces: an
 * underlay (a bridge in a namespace of its own, where a real etcd listens) and N hosts plugged into it,
 * each with a private dockerd ({@link Dockerd}, its own namespace) and the installed jcnid with
 * {@code --docker-driver} and {@code --etcd-endpoints} ({@link Dockerd#startDriver}). Each host's driver has its own name (dockerd finds
 * drivers in the one /run/docker/plugins); the cluster name ties them together. Everything carries a
 * random ID, so labs of several tests (or engineers) never meet. The underlay and etcd are a testfixtures
 * {@link World} of the lab's own, each host its dockerd's; {@link #close()} removes all of it and
 * says what was left behind.
 */
public final class DockerLab implements AutoCloseable {
    public static final String IMAGE = "jcni-bb";
    /** etcd's address on the underlay (private to the lab's namespaces). */
    public static final String ETCD_IP = "192.168.213.100";

    public final String id = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    /** The underlay's namespace: etcd, the switch, and nothing of any host. */
    public final String underlay = "jtu-" + id;
    /** The drivers' {@code --docker-etcd-prefix}. */
    public final String prefix = "/jcni-test-" + id + "/docker";
    public final Duration leaseTtl;
    public final Duration releaseGrace;
    public final List<Host> hosts = new ArrayList<>();
    private final Installed jcni;
    /** The underlay namespace, etcd and the lab's directory. */
    private final World world;
    private final Path dir;
    private Process etcd;

    /**
     * Starts the underlay, etcd, and {@code count} hosts (a, b, c, ...; underlay addresses
     * 192.168.213.1, .2, ...), each with its dockerd and jcnid, started side by side.
     *
     * @param leaseTtl     the drivers' {@code --docker-lease-ttl}: how long a dead host's containers stay programmed
     * @param releaseGrace the drivers' {@code --docker-release-grace}: how long after that its addresses stay taken
     */
    public static DockerLab start(int count, Duration leaseTtl, Duration releaseGrace) throws Exception {
        DockerLab lab = new DockerLab(leaseTtl, releaseGrace);
        try {
            lab.build(count);
            return lab;
        } catch (Exception | AssertionError e) {
            lab.close();
            throw e;
        }
    }

    /** A lab of {@code count} hosts with a 5 s lease and a 10 s release grace. */
    public static DockerLab start(int count) throws Exception {
        return start(count, Duration.ofSeconds(5), Duration.ofSeconds(10));
    }

    private DockerLab(Duration leaseTtl, Duration releaseGrace) throws IOException {
        this.leaseTtl = leaseTtl;
        this.releaseGrace = releaseGrace;
        this.jcni = Installed.get();
        this.world = new World("jtu", underlay);
        this.dir = world.dir;
    }

    private void build(int count) throws Exception {
        World.bridge(underlay, "sw", ETCD_IP + "/24");
        etcd = world.start(underlay, List.of("etcd", "--data-dir", dir.resolve("etcd").toString(), "--listen-client-urls",
                "http://" + ETCD_IP + ":2379", "--advertise-client-urls", "http://" + ETCD_IP + ":2379", "--listen-peer-urls", "http://127.0.0.1:2380"),
                dir.resolve("etcd.log"));
        // dockerd's start and image import dominate the lab's start: the hosts come up side by side.
        ConcurrentLinkedQueue<Throwable> failed = new ConcurrentLinkedQueue<>();
        List<Thread> starting = new ArrayList<>();
        Host[] made = new Host[count];
        for (int i = 0; i < count; i++) {
            int n = i;
            starting.add(Thread.ofPlatform().start(() -> {
                try {
                    made[n] = new Host(String.valueOf((char) ('a' + n)), n + 1);
                } catch (Exception | AssertionError e) {
                    failed.add(e);
                }
            }));
        }
        for (Thread t : starting) t.join();
        for (Host h : made) if (h != null) hosts.add(h);
        if (!failed.isEmpty()) throw new AssertionError("a lab host did not start", failed.peek());
        for (Host h : hosts) {
            World.attach(underlay, "sw", h.underlayLink, h.docker.netns, "uplink", h.underlayIp + "/24");
        }
        Await.until("etcd answers", Duration.ofMinutes(1), () -> etcdctl("endpoint", "health").rc() == 0 || !etcd.isAlive());
        if (!etcd.isAlive()) throw new AssertionError("etcd did not start:\n" + Files.readString(dir.resolve("etcd.log")));
        for (Host h : hosts) h.startJcnid();
    }

    /** etcdctl against the lab's etcd (run in the underlay namespace). */
    public Sh.Run etcdctl(String... args) {
        List<String> c = new ArrayList<>(List.of("env", "ETCDCTL_API=3", "etcdctl", "--endpoints", "http://" + ETCD_IP + ":2379"));
        c.addAll(List.of(args));
        return Sh.run(null, null, 30, World.exec(underlay, c).toArray(String[]::new));
    }

    /** Every key below the drivers' prefix. */
    public List<String> etcdKeys() {
        return Sh.lines(etcdctl("get", "--prefix", "--keys-only", prefix + "/").ok().out()).stream().filter(l -> !l.isBlank()).toList();
    }

    /** The value of one key below the drivers' prefix ("" when absent). */
    public String etcdValue(String keyBelowPrefix) {
        return etcdctl("get", "--print-value-only", prefix + "/" + keyBelowPrefix).ok().out().strip();
    }

    /** Stops (SIGSTOP) or continues (SIGCONT) etcd: unreachable without losing its data. */
    public void pauseEtcd(boolean pause) {
        Sh.ok("kill", pause ? "-STOP" : "-CONT", Long.toString(etcd.pid()));
    }

    /**
     * Removes every host (containers and networks first, while the drivers still answer; then dockerd,
     * jcnid and the namespace), etcd and the underlay.
     *
     * @return what was left behind: what the worlds' leak checks name, plugin sockets, and processes of the lab still running (killed now)
     */
    public List<String> closeAndListLeftovers() {
        List<String> left = new ArrayList<>();
        for (Host h : hosts) {
            try {
                h.docker.close();
            } catch (AssertionError e) {
                left.add(e.getMessage());
            }
        }
        try {
            world.close();
        } catch (AssertionError e) {
            left.add(e.getMessage());
        }
        for (Host h : hosts) if (Files.exists(h.socket())) left.add(h.socket().toString());
        // Processes of the lab outside its namespaces: jcnid (its command line holds the driver name and the etcd
        // prefix), etcd (the lab's directory), dockerd, containerd and shims (their dirs).
        List<String> patterns = new ArrayList<>(List.of("jcnc" + id, prefix, dir.toString()));
        for (Host h : hosts) patterns.add(h.docker.dir.toString());
        for (String p : patterns) {
            for (String pid : Sh.lines(Sh.run("pgrep", "-f", p).out())) {
                if (pid.isBlank() || pid.strip().equals(Long.toString(ProcessHandle.current().pid()))) continue;
                String cmd = Sh.run("ps", "-o", "args=", "-p", pid.strip()).out().strip();
                if (cmd.isEmpty() || cmd.startsWith("pgrep")) continue;
                left.add("process " + pid.strip() + ": " + cmd);
                Sh.quiet("kill", "-9", pid.strip());
            }
        }
        return left;
    }

    @Override
    public void close() {
        closeAndListLeftovers();
    }

    /** One host: its dockerd (and namespace), its jcnid and driver name. */
    public final class Host {
        /** a, b, c, ... */
        public final String name;
        /** The plugin name of this host's driver ({@code -d}, {@code --ipam-driver}). */
        public final String driver;
        public final Dockerd docker;
        /** This host's address on the underlay: its VTEP, and its key in etcd. */
        public final String underlayIp;
        /** The host's cable in the underlay namespace. */
        final String underlayLink;
        private JcnidProcess jcnid;

        Host(String name, int n) throws IOException {
            this.name = name;
            this.driver = "jcnc" + id + name;
            this.underlayIp = "192.168.213." + n;
            this.underlayLink = "jtu" + name + id;
            this.docker = new Dockerd("jtc-" + name + "-" + id);
        }

        public Path socket() {
            return Dockerd.pluginSocket(driver);
        }

        /** Starts this host's jcnid (after a kill, too: a stale socket is replaced) and waits for its driver to answer. */
        public void startJcnid() throws IOException {
            if (jcnid != null) {
                Dockerd.restartDriver(jcnid, driver);
                return;
            }
            jcnid = docker.startDriver(jcni, driver, "--docker-state-dir", docker.dir.resolve("driver").toString(),
                    "--etcd-endpoints", "http://" + ETCD_IP + ":2379", "--iface", "uplink", "--docker-etcd-prefix", prefix,
                    "--docker-lease-ttl", leaseTtl.toSeconds() + "s", "--docker-release-grace", releaseGrace.toSeconds() + "s", "--etcd-timeout", "3s");
        }

        /** kill -9 of jcnid: nothing cleaned up, its socket stays. */
        public void killJcnid() throws InterruptedException {
            jcnid.kill();
        }

        /**
         * The host dies: every process in its namespace (jcnid, dockerd, containerd, shims) and its
         * containers are killed with SIGKILL, and its namespace is deleted. Nothing is withdrawn from etcd or
         * cleaned up on the other hosts.
         */
        public void die() throws Exception {
            List<String> pids = new ArrayList<>();
            for (String c : Sh.lines(docker.run("ps", "-q").out())) {
                if (!c.isBlank()) pids.add(docker.run("inspect", "-f", "{{.State.Pid}}", c.strip()).out().strip());
            }
            pids.addAll(Sh.lines(Sh.run("ip", "netns", "pids", docker.netns).out()));
            for (String p : pids) if (!p.isBlank() && !p.strip().equals("0")) Sh.quiet("kill", "-9", p.strip());
            if (jcnid != null) Await.until("host " + name + "'s jcnid dead", Duration.ofSeconds(30), () -> !jcnid.alive());
            docker.world.deleteNamespace(docker.netns);
        }

        /** {@code docker network create} of a cluster network on this host. */
        public String createNetwork(String network, String cluster, String subnet, String gateway, String range, String... more) {
            List<String> c = new ArrayList<>(List.of("network", "create", "-d", driver, "--ipam-driver", driver, "--subnet", subnet, "--gateway", gateway));
            if (range != null) c.addAll(List.of("--ip-range", range));
            c.addAll(List.of("-o", "jcni.cluster=" + cluster));
            c.addAll(List.of(more));
            c.add(network);
            return docker.ok(c.toArray(String[]::new));
        }

        /** {@code docker run -d} of a sleeping busybox on {@code network} (more options before the image); its address. */
        public String run(String network, String container, String... more) {
            List<String> c = new ArrayList<>(List.of("run", "-d", "--name", container, "--network", network));
            c.addAll(List.of(more));
            c.addAll(List.of(IMAGE, "sleep", "3600"));
            docker.ok(c.toArray(String[]::new));
            return ip(network, container);
        }

        /** A container's address on {@code network}. */
        public String ip(String network, String container) {
            return docker.ok("inspect", "-f", "{{(index .NetworkSettings.Networks \"" + network + "\").IPAddress}}", container);
        }

        /** One ping (busybox's) from a container. */
        public Sh.Run ping(String container, String ip) {
            return docker.run("exec", container, "ping", "-c", "1", "-W", "2", ip);
        }

        /** A command (of the machine, e.g. iputils' ping) run in a container's network namespace. */
        public Sh.Run inContainerNetns(String container, String... cmd) {
            String pid = docker.ok("inspect", "-f", "{{.State.Pid}}", container);
            List<String> c = new ArrayList<>(List.of("nsenter", "-t", pid, "-n"));
            c.addAll(List.of(cmd));
            return Sh.run(null, null, 60, c.toArray(String[]::new));
        }

        /** The name of this host's VXLAN device of the cluster network with {@code vni} (or its only one, vni 0). */
        public String vxlanDevice(int vni) {
            for (String l : Sh.lines(docker.inHost("ip", "-o", "link", "show", "type", "vxlan").out())) {
                String dev = l.contains(":") ? l.split(":")[1].strip().split("@")[0] : "";
                if (vni == 0 ? dev.startsWith("jcvx") : dev.equals("jcvx" + vni)) return dev;
            }
            throw new AssertionError("no jcvx device" + (vni == 0 ? "" : " of VNI " + vni) + " on host " + name);
        }

        /** The static FDB entries of a VXLAN device, one line each, sorted. */
        public List<String> fdb(String device) {
            return Sh.lines(docker.inHost("bridge", "fdb", "show", "dev", device).out()).stream().filter(l -> !l.isBlank()).map(String::strip).sorted().toList();
        }

        /** Whether this host programs any container of {@code remote} on the VXLAN device. */
        public boolean programs(String device, Host remote) {
            return fdb(device).stream().anyMatch(l -> l.contains("dst " + remote.underlayIp + " "));
        }

        /** Waits (bounded) until a container of this host pings {@code ip}, failing with this host's FDB and neighbours. */
        public void awaitPing(String container, String ip) {
            Sh.Run r = null;
            for (int i = 0; i < 60; i++) {
                r = ping(container, ip);
                if (r.rc() == 0) return;
                Await.pause(250);
            }
            throw new AssertionError("no ping from " + container + " on host " + name + " to " + ip + ": " + r.out() + r.err() + "\nfdb:\n"
                    + docker.inHost("bridge", "fdb", "show").out() + "\nneigh:\n" + docker.inHost("ip", "neigh", "show").out());
        }

        @Override
        public String toString() {
            return "host " + name + " (" + underlayIp + ")";
        }
    }
}
