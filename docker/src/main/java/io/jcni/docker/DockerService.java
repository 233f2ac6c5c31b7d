package io.jcni.docker;

import io.jcni.common.Flags;
import io.jcni.daemon.DaemonService;
import java.io.IOException;
import java.io.PrintStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The Docker driver as a service of jcnid: {@code jcnid start --docker-driver NAME
 * [--docker-plugin-dir DIR] [--docker-state-dir DIR]}.
 */
public final class DockerService implements DaemonService {
    static final String DRIVER = "--docker-driver";
    static final String PLUGIN_DIR = "--docker-plugin-dir";
    static final String STATE_DIR = "--docker-state-dir";
    /** The store of cluster networks: the overlay agent's flags, so one jcnid command line configures both. */
    static final String ETCD = "--etcd-endpoints";
    static final String ETCD_TIMEOUT = "--etcd-timeout";
    static final String IFACE = "--iface";
    static final String PUBLIC_IP = "--public-ip";
    /** Not --etcd-prefix: that one is flannel's network prefix, which the overlay agent reads. */
    static final String ETCD_PREFIX = "--docker-etcd-prefix";
    static final String LEASE_TTL = "--docker-lease-ttl";
    static final String RELEASE_GRACE = "--docker-release-grace";
    /** Long enough that a jcnid restart or a short etcd outage never frees a living host's addresses (a restart takes them back anyway). */
    static final java.time.Duration DEFAULT_RELEASE_GRACE = java.time.Duration.ofMinutes(5);
    public static final String DEFAULT_ETCD_PREFIX = "/jcni/docker";
    public static final Path DEFAULT_PLUGIN_DIR = Path.of("/run/docker/plugins");
    public static final Path DEFAULT_STATE_DIR = Path.of("/var/lib/jcni/docker");
    /** A plugin name is a file name in the plugin directory, and what users type after -d. */
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}");

    @Override
    public String enableFlag() {
        return DRIVER;
    }

    @Override
    public Set<String> valueFlags() {
        Set<String> s = new java.util.HashSet<>(Set.of(DRIVER, PLUGIN_DIR, STATE_DIR, ETCD, ETCD_TIMEOUT, IFACE, PUBLIC_IP, ETCD_PREFIX, LEASE_TTL, RELEASE_GRACE));
        s.addAll(io.jcni.etcd.EtcdSecurity.FLAGS);
        return Set.copyOf(s);
    }

    @Override
    public Set<String> switchFlags() {
        return Set.of();
    }

    @Override
    public Running start(List<String> args, PrintStream log) throws Exception {
        DockerDriver d = DockerDriver.start(options(args), log);
        return new Running() {
            @Override
            public String status() {
                return d.status();
            }

            @Override
            public void close() {
                d.close();
            }
        };
    }

    /** The plugin name of the training's driver. */
    static final String TRAINING_NAME = "jt";
    /** What the training asks, as dockerd does when it finds the socket and when it learns of a network node. */
    private static final List<String> TRAINING_CALLS = List.of("/Plugin.Activate", "/NetworkDriver.GetCapabilities",
            "/IpamDriver.GetCapabilities", "/IpamDriver.GetDefaultAddressSpaces", "/NetworkDriver.DiscoverNew");
    /** A training call that gets no answer within this is given up (the training must never hang an install). */
    private static final Duration TRAINING_CALL_LIMIT = Duration.ofSeconds(5);

    /**
     * The driver started on a scratch socket and state, asked what dockerd asks first, stopped: Jetty
     * (server, connector, HTTP parser, handler) is most of the driver's start-up when it is not in
     * jcnid's AOT cache. Run by a normal user, the calls are refused (root only) and only the start is trained.
     */
    @Override
    public void train(Path scratch, PrintStream log) throws Exception {
        // Short names: the socket is bound in a staging directory beside it, and a unix socket's path holds 107 bytes.
        DockerDriver d = DockerDriver.start(DockerDriver.Options.of(TRAINING_NAME, scratch.resolve("p"), scratch.resolve("s")), log);
        try {
            for (String call : TRAINING_CALLS) post(d.socket(), call);
        } finally {
            d.close();
        }
    }

    /** One HTTP/1.1 POST with an empty JSON object, its answer read to the end (the connection is closed after it). */
    private static void post(Path socket, String path) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            Thread limit = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(TRAINING_CALL_LIMIT);
                    ch.close(); // a read blocked on it ends with AsynchronousCloseException
                } catch (InterruptedException | IOException e) {
                    // answered in time, or closed already
                }
            });
            try {
                ch.write(ByteBuffer.wrap(("POST " + path + " HTTP/1.1\r\nHost: \r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
                        .getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer b = ByteBuffer.allocate(4096);
                while (ch.read(b) >= 0) b.clear();
            } finally {
                limit.interrupt();
            }
        }
    }

    /** The driver's options from its flags (in order, values following their flag). */
    static DockerDriver.Options options(List<String> args) {
        String name = null;
        Path plugins = DEFAULT_PLUGIN_DIR, state = DEFAULT_STATE_DIR;
        List<String> etcd = List.of();
        io.jcni.etcd.EtcdSecurity security = io.jcni.etcd.EtcdSecurity.NONE;
        String iface = "", publicIp = "", prefix = DEFAULT_ETCD_PREFIX;
        java.time.Duration ttl = java.time.Duration.ofSeconds(15), timeout = java.time.Duration.ofSeconds(5), grace = DEFAULT_RELEASE_GRACE;
        Flags f = new Flags(args);
        while (f.next()) {
            switch (f.name()) {
                case DRIVER -> name = f.value();
                case PLUGIN_DIR -> plugins = f.path();
                case STATE_DIR -> state = f.path();
                case ETCD -> etcd = io.jcni.etcd.EtcdClient.splitEndpoints(f.value());
                case ETCD_TIMEOUT -> timeout = f.duration(java.time.Duration.ofSeconds(1), java.time.Duration.ofMinutes(5));
                case IFACE -> iface = f.value();
                case PUBLIC_IP -> publicIp = f.value();
                case ETCD_PREFIX -> {
                    String v = f.value();
                    prefix = v.endsWith("/") ? v.substring(0, v.length() - 1) : v;
                }
                case LEASE_TTL -> ttl = f.duration(java.time.Duration.ofSeconds(2), java.time.Duration.ofHours(1));
                case RELEASE_GRACE -> grace = f.duration(java.time.Duration.ofSeconds(1), java.time.Duration.ofDays(7));
                default -> {
                    if (!io.jcni.etcd.EtcdSecurity.FLAGS.contains(f.name())) throw new IllegalArgumentException("unknown Docker driver option " + f.token());
                    security = security.withFlag(f.name(), f.value());
                }
            }
        }
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(DRIVER + ": a plugin name is 1-64 letters, digits, '_', '.' or '-': " + name);
        }
        DockerDriver.Options o = DockerDriver.Options.of(name, plugins, state);
        if (etcd.isEmpty()) return o;
        return o.withCluster(new DockerDriver.ClusterOptions(etcd, security.validated(), prefix, iface, publicIp, ttl, timeout, grace));
    }
}
