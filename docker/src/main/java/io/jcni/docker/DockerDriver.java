package io.jcni.docker;

import io.jcni.docker.api.DriverException;
import io.jcni.docker.api.RemoteApi;
import io.jcni.docker.cluster.Cluster;
import io.jcni.docker.cluster.Underlay;
import io.jcni.docker.store.EtcdStore;
import io.jcni.etcd.EtcdClient;
import io.jcni.linux.Rtnl;
import io.jcni.docker.ipam.JcniIpam;
import io.jcni.docker.network.CniAttacher;
import io.jcni.docker.network.CniNetworkDriver;
import io.jcni.docker.server.PluginSocketServer;
import io.jcni.docker.store.FileStore;
import io.jcni.runtime.ConfigLoader;
import io.jcni.runtime.PluginExec;
import io.jcni.types.CniException;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import io.jcni.types.PluginConf;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The Docker driver assembled: state, IPAM, network driver, and the plugin socket. */
public final class DockerDriver implements AutoCloseable {

    /**
     * @param name      the plugin name: {@code docker network create -d NAME --ipam-driver NAME}
     * @param pluginDir where dockerd looks for {@code NAME.sock}
     * @param stateDir  persisted state ({@code state/}) and the CNI result cache ({@code results/})
     * @param confDir   where {@code -o jcni.conflist=NAME} is looked up
     * @param cniPath   where plugins that are not jcni's own are found
     */
    public record Options(String name, Path pluginDir, Path stateDir, Path confDir, List<Path> cniPath, ClusterOptions cluster) {
        public static Options of(String name, Path pluginDir, Path stateDir) {
            String conf = System.getenv("NETCONFPATH");
            String path = System.getenv("CNI_PATH");
            return new Options(name, pluginDir, stateDir, conf == null || conf.isEmpty() ? ConfigLoader.DEFAULT_DIR : Path.of(conf),
                    path == null || path.isEmpty() ? List.of(Path.of("/opt/cni/bin"), Path.of("/usr/lib/cni")) : PluginExec.splitPath(path), null);
        }

        public Options withCluster(ClusterOptions c) {
            return new Options(name, pluginDir, stateDir, confDir, cniPath, c);
        }

        public Path socket() {
            return pluginDir.resolve(name + ".sock");
        }
    }

    /**
     * Cluster networks ({@code -o jcni.cluster=NAME}): their store and VXLAN underlay, as the overlay agent takes them.
     *
     * @param prefix   etcd key prefix of the driver's shared state ({@code --docker-etcd-prefix}, default {@code /jcni/docker})
     * @param iface    {@code --iface}: the underlay's name or address ("": the default route's interface)
     * @param publicIp {@code --public-ip}: the VTEP address other hosts send to ("": the underlay's first IPv4 address)
     * @param leaseTtl how long this host's publications outlive it ({@code --docker-lease-ttl})
     * @param timeout  every etcd call's bound ({@code --etcd-timeout})
     * @param releaseGrace how long after a host's lease went its addresses stay taken ({@code --docker-release-grace})
     */
    public record ClusterOptions(List<String> endpoints, io.jcni.etcd.EtcdSecurity security, String prefix, String iface, String publicIp,
            java.time.Duration leaseTtl, java.time.Duration timeout, java.time.Duration releaseGrace) {}

    private final Options options;
    private final CniNetworkDriver network;
    private final JcniIpam ipam;
    private final PluginSocketServer server;
    private final CniAttacher attacher;
    private final Cluster cluster;

    private DockerDriver(Options options, CniNetworkDriver network, JcniIpam ipam, PluginSocketServer server, CniAttacher attacher, Cluster cluster) {
        this.options = options;
        this.cluster = cluster;
        this.network = network;
        this.ipam = ipam;
        this.server = server;
        this.attacher = attacher;
    }

    /**
     * Loads the state, cleans up after endpoints whose containers are gone, then serves the socket.
     *
     * @throws DriverStartException when the driver cannot serve at all (never for a damaged state file:
     *                              that one is moved aside and logged)
     */
    public static DockerDriver start(Options o, PrintStream log) throws DriverStartException {
        try {
            return startOrThrow(o, log);
        } catch (IOException | RuntimeException e) {
            throw new DriverStartException("the Docker driver " + o.name() + " cannot start (socket " + o.socket() + ", state "
                    + o.stateDir() + "): " + (e.getMessage() == null ? e.toString() : e.getMessage()), e);
        }
    }

    private static DockerDriver startOrThrow(Options o, PrintStream log) throws IOException {
        long t0 = System.nanoTime();
        FileStore store = new FileStore(o.stateDir().resolve("state"));
        List<Path> path = new ArrayList<>();
        path.add(Launchers.write(o.stateDir().resolve("bin")));
        path.addAll(o.cniPath());
        CniAttacher attacher = new CniAttacher(path, o.stateDir().resolve("results"));
        CniNetworkDriver network = new CniNetworkDriver(store, attacher, name -> conflist(o.confDir(), name), "local", log);
        network.dataDir(o.stateDir().resolve("nft").toString());
        JcniIpam ipam = new JcniIpam(store, line -> {
            if (log != null) log.println(Instant.now() + " jcnid docker " + line);
        });
        Cluster cluster = null;
        if (o.cluster() != null) {
            ClusterOptions c = o.cluster();
            EtcdStore etcd = new EtcdStore(new EtcdClient(c.endpoints(), c.timeout(), c.security()), c.prefix(), String.join(",", c.endpoints()));
            Underlay underlay;
            try (Rtnl rt = Rtnl.open()) {
                underlay = Underlay.find(rt, c.iface(), c.publicIp());
            }
            cluster = new Cluster(etcd, ipam, underlay, c.leaseTtl().toSeconds(), c.releaseGrace(), log);
            cluster.start();
            network.cluster(cluster);
            ipam.sharedPools(cluster);
            if (log != null) log.println(Instant.now() + " jcnid docker cluster etcd=" + String.join(",", c.endpoints()) + " prefix=" + c.prefix()
                    + " underlay=" + underlay.name() + " vtep=" + underlay.address() + " mtu=" + (underlay.mtu() - io.jcni.docker.cluster.ClusterKeys.VXLAN_OVERHEAD));
        }
        int cleaned = network.reconcile();
        long t1 = System.nanoTime();
        PluginSocketServer server = PluginSocketServer.start(o.socket(), new RemoteApi(network, ipam, log), log,
                PluginSocketServer.READ_DEADLINE_MILLIS);
        if (log != null) {
            log.println(Instant.now() + " jcnid docker started name=" + o.name() + " socket=" + o.socket() + " networks="
                    + network.networks().size() + " endpoints=" + network.endpoints().size() + " reconciled=" + cleaned
                    + " start_ms=" + String.format("%.1f", (System.nanoTime() - t0) / 1e6) + " http_ms="
                    + String.format("%.1f", (System.nanoTime() - t1) / 1e6));
        }
        return new DockerDriver(o, network, ipam, server, attacher, cluster);
    }

    /** {@code -o jcni.conflist=NAME}: the list as it is now (copied into the network, so later edits do not split ADD from DEL). */
    static Map<String, Object> conflist(Path dir, String name) {
        NetConfList l;
        try {
            l = ConfigLoader.load(dir, name);
        } catch (CniException e) {
            throw new DriverException("CreateNetwork: jcni.conflist=" + name + ": " + e.getMessage());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cniVersion", l.cniVersion());
        List<Object> plugins = new ArrayList<>();
        for (PluginConf p : l.plugins()) plugins.add(Json.deepCopy(p.raw()));
        m.put("plugins", plugins);
        return m;
    }

    public Options options() {
        return options;
    }

    public Path socket() {
        return server.socket();
    }

    public CniNetworkDriver network() {
        return network;
    }

    public JcniIpam ipam() {
        return ipam;
    }

    /** A line for {@code jcnid status}. */
    public String status() {
        return "docker_driver " + options.name() + " socket " + server.socket() + " networks " + network.networks().size()
                + " endpoints " + network.endpoints().size() + " pools " + ipam.pools().size() + "\n" + (cluster == null ? "" : cluster.status());
    }

    /** Stops serving, then lets veth deletions still running in the background finish. */
    @Override
    public void close() {
        server.close();
        if (cluster != null) cluster.close();
        attacher.settle();
    }
}
