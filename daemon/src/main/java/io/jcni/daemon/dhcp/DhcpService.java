package io.jcni.daemon.dhcp;

import io.jcni.common.Flags;
import io.jcni.daemon.StaleSocket;

import io.jcni.daemon.DaemonService;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Instant;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import jdk.net.ExtendedSocketOptions;

/**
 * {@code jcnid --dhcp}: the lease keeper behind the {@code dhcp} IPAM plugin, on its own unix
 * socket (default {@code /run/jcni/dhcp.sock}; the plugin's {@code daemonSocketPath}).
 *
 * <p>Protocol: one request per connection, a JSON object on one line, answered by one JSON line:
 * <pre>
 * {"op":"add","containerId":..,"network":..,"ifname":..,"netns":..,"request":[1,3],"provide":{"12":"hex"},"timeoutMillis":10000}
 *   -> {"ok":true,"lease":{"address":"10.0.0.5/24","gateway":..,"routes":[{"dst":..,"gw":..}],"nameservers":[..],"domain":..}}
 * {"op":"del"|"check", "containerId","network","ifname"}             -> {"ok":true[,"lease":..]}
 * {"op":"gc","network":..,"valid":[["containerId","ifname"],..]}       -> {"ok":true,"released":n}
 * {"op":"status"}                                                      -> {"ok":true,"leases":n}
 * any failure                                                          -> {"ok":false,"error":"..."}
 * </pre>
 * Only peers of jcnid's own user (root) are served.
 */
public final class DhcpService implements DaemonService {
    public static final String DEFAULT_SOCKET = "/run/jcni/dhcp.sock";
    public static final String DEFAULT_STATE_DIR = "/var/lib/cni/jcni/dhcp";
    static final int MAX_REQUEST = 1 << 20;
    /** How long a client may take to send its request. */
    static final long IO_TIMEOUT_MILLIS = 10_000;
    /** The longest ADD timeout honoured, whatever a request asks for. */
    static final long MAX_TIMEOUT_MILLIS = 300_000;

    @Override
    public String enableFlag() {
        return "--dhcp";
    }

    @Override
    public Set<String> valueFlags() {
        return Set.of("--dhcp-socket", "--dhcp-state-dir");
    }

    @Override
    public Set<String> switchFlags() {
        return Set.of();
    }

    @Override
    public Running start(List<String> args, PrintStream log) throws Exception {
        Path socket = Path.of(DEFAULT_SOCKET);
        Path state = Path.of(DEFAULT_STATE_DIR);
        Flags f = new Flags(args);
        while (f.next()) {
            switch (f.name()) {
                case "--dhcp" -> { }
                case "--dhcp-socket" -> socket = f.path();
                case "--dhcp-state-dir" -> state = f.path();
                default -> throw new IllegalArgumentException("unknown dhcp flag " + f.token());
            }
        }
        DhcpLeases leases = new DhcpLeases(new LeaseStore(state), log);
        int reloaded = leases.reload();
        Server s = new Server(socket.toAbsolutePath(), state, leases, log);
        s.bind();
        log.println(Instant.now() + " jcnid dhcp started socket=" + socket + " state_dir=" + state + " reloaded=" + reloaded);
        return s;
    }

    static final class Server implements Running {
        private final Path socket;
        private final Path state;
        private final DhcpLeases leases;
        private final PrintStream log;
        private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("jcnid-dhcp-watchdog").daemon().factory());
        private ServerSocketChannel server;
        private UserPrincipal owner;
        private volatile boolean closed;

        Server(Path socket, Path state, DhcpLeases leases, PrintStream log) {
            this.socket = socket;
            this.state = state;
            this.leases = leases;
            this.log = log;
        }

        void bind() throws IOException {
            Path dir = socket.getParent();
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            }
            StaleSocket.removeIfStale(socket);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket), 64);
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
            owner = Files.getOwner(socket);
            Thread.ofPlatform().name("jcnid-dhcp-accept").daemon().start(this::acceptLoop);
        }

        private void acceptLoop() {
            while (!closed) {
                SocketChannel ch;
                try {
                    ch = server.accept();
                } catch (IOException e) {
                    if (closed) return;
                    continue;
                }
                // Platform threads: an exchange blocks in native poll(2) for up to its timeout.
                Thread.ofPlatform().name("jcnid-dhcp-conn").daemon().start(() -> {
                    try (ch) {
                        serve(ch);
                    } catch (IOException | RuntimeException e) {
                        log.println(Instant.now() + " jcnid dhcp connection_error=" + DhcpLeases.quote(String.valueOf(e)));
                    }
                });
            }
        }

        private void serve(SocketChannel ch) throws IOException {
            if (!owner.equals(ch.getOption(ExtendedSocketOptions.SO_PEERCRED).user())) return;
            // A client that connects and sends nothing must not hold a thread: it gets IO_TIMEOUT to send its line.
            ScheduledFuture<?> dog = watchdog.schedule(() -> closeQuietly(ch), IO_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            String line;
            try {
                line = readLine(ch);
            } finally {
                dog.cancel(false);
            }
            Map<String, Object> reply;
            try {
                reply = handle(Json.parseObject(line));
            } catch (DhcpException e) {
                reply = error(e.getMessage());
            } catch (RuntimeException | IOException e) {
                reply = error(String.valueOf(e.getMessage() == null ? e : e.getMessage()));
            }
            ByteBuffer out = ByteBuffer.wrap((Json.write(reply) + "\n").getBytes(StandardCharsets.UTF_8));
            while (out.hasRemaining()) ch.write(out);
        }

        private Map<String, Object> handle(Map<String, Object> req) throws DhcpException, IOException {
            String op = str(req, "op");
            Map<String, Object> ok = new LinkedHashMap<>();
            ok.put("ok", true);
            switch (op) {
                case "add" -> {
                    List<Integer> requested = Json.asList(req.getOrDefault("request", List.of())).stream()
                            .map(o -> ((Number) o).intValue()).toList();
                    Map<Integer, byte[]> provided = new LinkedHashMap<>();
                    Json.asObject(req.getOrDefault("provide", Map.of()))
                            .forEach((k, v) -> provided.put(Integer.parseInt(k), HexFormat.of().parseHex((String) v)));
                    long timeout = Math.max(1, Math.min(MAX_TIMEOUT_MILLIS, ((Number) req.getOrDefault("timeoutMillis", 10_000L)).longValue()));
                    Lease l = leases.acquire(new DhcpLeases.Acquire(str(req, "containerId"), str(req, "network"),
                            str(req, "ifname"), str(req, "netns"), requested, provided, timeout));
                    ok.put("lease", l.resultJson());
                }
                case "check" -> {
                    Lease l = leases.get(clientId(req));
                    if (l == null) return error("no DHCP lease for " + clientId(req));
                    ok.put("lease", l.resultJson());
                }
                case "del" -> leases.release(clientId(req));
                case "status" -> ok.put("leases", (long) leases.size());
                case "gc" -> {
                    Set<List<String>> valid = new HashSet<>();
                    for (Object o : Json.asList(req.getOrDefault("valid", List.of()))) {
                        List<Object> pair = Json.asList(o);
                        valid.add(List.of((String) pair.get(0), (String) pair.get(1)));
                    }
                    ok.put("released", (long) leases.collect(str(req, "network"), valid).size());
                }
                default -> {
                    return error("unknown op " + op);
                }
            }
            return ok;
        }

        private static String clientId(Map<String, Object> req) {
            return ClientIdentity.clientId(str(req, "containerId"), str(req, "network"), str(req, "ifname"));
        }

        private static String str(Map<String, Object> m, String k) {
            if (!(m.get(k) instanceof String s)) throw new IllegalArgumentException("request lacks \"" + k + "\"");
            return s;
        }

        private static Map<String, Object> error(String msg) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ok", false);
            m.put("error", msg);
            return m;
        }

        private static String readLine(SocketChannel ch) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(4096);
            while (b.size() < MAX_REQUEST) {
                buf.clear();
                int n = ch.read(buf);
                if (n < 0) break;
                int nl = -1;
                for (int i = 0; i < n; i++) if (buf.get(i) == '\n') { nl = i; break; }
                b.write(buf.array(), 0, nl < 0 ? n : nl);
                if (nl >= 0) break;
            }
            return b.toString(StandardCharsets.UTF_8);
        }

        private static void closeQuietly(SocketChannel ch) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing a stuck client
            }
        }

        @Override
        public String status() {
            return "dhcp " + socket + " leases=" + leases.size() + " state_dir=" + state + "\n";
        }

        @Override
        public void close() {
            if (closed) return;
            closed = true;
            leases.close();
            watchdog.shutdownNow();
            try {
                if (server != null) server.close();
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // stopping anyway
            }
        }
    }
}
