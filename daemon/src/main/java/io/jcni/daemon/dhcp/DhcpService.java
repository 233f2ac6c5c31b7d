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
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * too many requests waiting                                            -> {"ok":false,"error":"...","busy":true}
 * </pre>
 * Only peers of jcnid's own user (root) are served.
 *
 * <p>Threads are bounded whatever clients do: one thread accepts connections and reads their
 * request lines (non-blocking, each with a deadline, at most {@link #MAX_READING} at once) and
 * answers {@code status} itself; a fixed pool of {@link #WORKERS} platform threads runs the
 * others (an exchange blocks in native poll(2) inside the container's namespace, which a virtual
 * thread must not do), with {@link #MAX_WAITING} requests waiting at most. The accept loop
 * survives any Throwable (a thread that cannot be created, memory); when it or the workers stop
 * making progress, {@link Server#stalled()} says so, and the status line shows it.
 */
public final class DhcpService implements DaemonService {
    public static final String DEFAULT_SOCKET = "/run/jcni/dhcp.sock";
    public static final String DEFAULT_STATE_DIR = "/var/lib/cni/jcni/dhcp";
    /** The longest request line: 256 provided options of 255 bytes, in hex, fit. */
    static final int MAX_REQUEST = 256 << 10;
    /** How long a client may take to send its request; a connection that sends none is closed then. */
    static final long IO_TIMEOUT_MILLIS = 10_000;
    /** Connections still sending their request, at most; the oldest is closed to make room for a new one. */
    static final int MAX_READING = 256;
    /** Threads that run requests (an ADD blocks one for up to its timeout), and requests waiting for one. */
    static final int WORKERS = 32;
    static final int MAX_WAITING = 256;
    /** The accept loop ticks at least this often; not ticking for {@link #STALL_MILLIS} means it hangs. */
    static final long TICK_MILLIS = 1_000;
    static final long STALL_MILLIS = 5_000;
    /** A request waiting this long for a worker means the workers are all stuck. */
    static final long WAIT_STALL_MILLIS = 30_000;
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
        private final DhcpRequests requests;
        private final PrintStream log;
        /** Requests read in full, waiting for a worker. */
        private final BlockingQueue<Request> waiting = new ArrayBlockingQueue<>(MAX_WAITING);
        private final List<Thread> workers = new ArrayList<>();
        private final AtomicInteger busy = new AtomicInteger();
        /** Connections sending their request, oldest first. */
        private final Map<SocketChannel, Reading> reading = new LinkedHashMap<>();
        private final AtomicLong loopErrors = new AtomicLong();
        private final AtomicLong dropped = new AtomicLong();
        private ServerSocketChannel server;
        private Selector selector;
        private Thread loop;
        private UserPrincipal owner;
        private volatile long tick = System.nanoTime();
        private volatile boolean closed;
        /** {@link #IO_TIMEOUT_MILLIS} and {@link #WAIT_STALL_MILLIS}, shorter in tests. */
        long ioTimeoutMillis = IO_TIMEOUT_MILLIS;
        long waitStallMillis = WAIT_STALL_MILLIS;

        /** A connection's request line as it comes in, and when it must have come. */
        private static final class Reading {
            final ByteArrayOutputStream line = new ByteArrayOutputStream();
            final long deadline;

            Reading(long timeoutMillis) {
                deadline = System.nanoTime() + timeoutMillis * 1_000_000;
            }
        }

        private record Request(SocketChannel ch, String line, long since) {}

        Server(Path socket, Path state, DhcpLeases leases, PrintStream log) {
            this.socket = socket;
            this.state = state;
            this.leases = leases;
            this.requests = new DhcpRequests(leases, log);
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
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            for (int i = 0; i < WORKERS; i++) {
                try {
                    workers.add(Thread.ofPlatform().name("jcnid-dhcp-worker-" + i).daemon().start(this::work));
                } catch (OutOfMemoryError e) { // no thread to be had (a task limit): serve with those there are
                    if (workers.isEmpty()) throw new IOException("jcnid dhcp: cannot start a single worker thread: " + e.getMessage());
                    log.println(Instant.now() + " jcnid dhcp workers=" + workers.size() + " error=" + DhcpLeases.quote(String.valueOf(e)));
                    break;
                }
            }
            loop = Thread.ofPlatform().name("jcnid-dhcp-accept").daemon().start(this::acceptLoop);
        }

        /** Accepts, reads request lines, closes idle connections; survives anything thrown at it. */
        private void acceptLoop() {
            while (!closed) {
                tick = System.nanoTime();
                try {
                    selector.select(TICK_MILLIS);
                    tick = System.nanoTime();
                    for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                        SelectionKey k = it.next();
                        it.remove();
                        if (!k.isValid()) continue;
                        if (k.isAcceptable()) acceptAll();
                        else if (k.isReadable()) readFrom((SocketChannel) k.channel());
                    }
                    dropIdle();
                } catch (Throwable t) {
                    if (closed) return;
                    loopErrors.incrementAndGet();
                    try {
                        log.println(Instant.now() + " jcnid dhcp accept_error=" + DhcpLeases.quote(String.valueOf(t)));
                        Thread.sleep(50); // e.g. no memory or descriptors: let them come back rather than spin
                    } catch (Throwable ignored) {
                        // go on
                    }
                }
            }
        }

        private void acceptAll() throws IOException {
            SocketChannel ch;
            while ((ch = server.accept()) != null) {
                try {
                    if (!owner.equals(ch.getOption(ExtendedSocketOptions.SO_PEERCRED).user())) {
                        closeQuietly(ch);
                        continue;
                    }
                    if (reading.size() >= MAX_READING) { // the oldest has had the longest to send its line
                        SocketChannel oldest = reading.keySet().iterator().next();
                        reading.remove(oldest);
                        dropped.incrementAndGet();
                        closeQuietly(oldest);
                    }
                    ch.configureBlocking(false);
                    ch.register(selector, SelectionKey.OP_READ);
                    reading.put(ch, new Reading(ioTimeoutMillis));
                } catch (IOException | RuntimeException e) {
                    reading.remove(ch);
                    closeQuietly(ch);
                }
            }
        }

        private void readFrom(SocketChannel ch) {
            Reading r = reading.get(ch);
            if (r == null) return;
            ByteBuffer buf = ByteBuffer.allocate(4096);
            try {
                while (true) {
                    buf.clear();
                    int n = ch.read(buf);
                    if (n == 0) return; // more later
                    int nl = -1;
                    for (int i = 0; i < Math.max(n, 0); i++) if (buf.get(i) == '\n') { nl = i; break; }
                    if (n > 0) r.line.write(buf.array(), 0, nl < 0 ? n : nl);
                    if (n < 0 || nl >= 0 || r.line.size() >= MAX_REQUEST) break;
                }
            } catch (IOException e) {
                reading.remove(ch);
                closeQuietly(ch);
                return;
            }
            reading.remove(ch);
            SelectionKey key = ch.keyFor(selector);
            if (key != null) key.cancel();
            dispatch(new Request(ch, r.line.toString(StandardCharsets.UTF_8), System.nanoTime()));
        }

        /** {@code status} is answered here, whatever the workers do; the rest waits for a worker, or is refused when too many wait. */
        private void dispatch(Request req) {
            Map<String, Object> parsed;
            try {
                parsed = Json.parseObject(req.line());
            } catch (RuntimeException e) {
                reply(req.ch(), DhcpRequests.error(String.valueOf(e.getMessage() == null ? e : e.getMessage())));
                return;
            }
            if ("status".equals(parsed.get("op"))) {
                reply(req.ch(), requests.answer(parsed));
                return;
            }
            if (!waiting.offer(req)) {
                Map<String, Object> busy = DhcpRequests.error("jcnid's DHCP service is busy: " + MAX_WAITING + " requests are waiting; try again");
                busy.put("busy", true);
                reply(req.ch(), busy);
            }
        }

        private void dropIdle() {
            long now = System.nanoTime();
            for (Iterator<Map.Entry<SocketChannel, Reading>> it = reading.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<SocketChannel, Reading> e = it.next();
                if (now - e.getValue().deadline < 0) break; // oldest first: the rest are younger
                it.remove();
                dropped.incrementAndGet();
                closeQuietly(e.getKey());
            }
        }

        private void work() {
            while (!closed) {
                Request req;
                try {
                    req = waiting.take();
                } catch (InterruptedException e) {
                    return;
                }
                busy.incrementAndGet();
                try {
                    reply(req.ch(), requests.answer(Json.parseObject(req.line())));
                } catch (Throwable t) {
                    log.println(Instant.now() + " jcnid dhcp connection_error=" + DhcpLeases.quote(String.valueOf(t)));
                    closeQuietly(req.ch());
                } finally {
                    busy.decrementAndGet();
                }
            }
        }

        /** Writes the reply line (small: the socket's buffer takes it at once, or within the I/O timeout) and closes. */
        private static void reply(SocketChannel ch, Map<String, Object> reply) {
            try (ch) {
                ByteBuffer out = ByteBuffer.wrap((Json.write(reply) + "\n").getBytes(StandardCharsets.UTF_8));
                long deadline = System.nanoTime() + IO_TIMEOUT_MILLIS * 1_000_000;
                while (out.hasRemaining() && System.nanoTime() - deadline < 0) {
                    if (ch.write(out) == 0) Thread.sleep(1);
                }
            } catch (IOException | InterruptedException ignored) {
                // the client went away: nothing to tell it
            }
        }

        private static void closeQuietly(SocketChannel ch) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing a stuck client
            }
        }

        /**
         * Why the service is not serving, or null when it is: its accept loop has stopped or not
         * ticked for {@link #STALL_MILLIS}, or a request has waited {@link #WAIT_STALL_MILLIS} for
         * a worker (all of them stuck).
         */
        @Override
        public String stalled() {
            if (closed) return null;
            if (loop == null || !loop.isAlive()) return "the accept loop has stopped";
            long quiet = (System.nanoTime() - tick) / 1_000_000;
            if (quiet > STALL_MILLIS) return "the accept loop has not run for " + quiet / 1000 + " s";
            Request oldest = waiting.peek();
            if (oldest != null) {
                long waited = (System.nanoTime() - oldest.since()) / 1_000_000;
                if (waited > waitStallMillis) {
                    return waiting.size() + " requests waiting, the oldest for " + waited / 1000 + " s; " + busy.get() + " of "
                            + workers.size() + " workers busy";
                }
            }
            return null;
        }

        @Override
        public String status() {
            String stalled = stalled();
            return "dhcp " + socket + " leases=" + leases.size() + " state_dir=" + state
                    + (stalled == null ? " health=ok" : " health=stalled reason=" + DhcpLeases.quote(stalled))
                    + " workers=" + busy.get() + "/" + workers.size() + " waiting=" + waiting.size()
                    + " dropped_idle=" + dropped.get() + " loop_errors=" + loopErrors.get() + "\n";
        }

        @Override
        public void close() {
            if (closed) return;
            closed = true;
            leases.close();
            for (Thread w : workers) w.interrupt();
            try {
                if (selector != null) selector.close();
                if (server != null) server.close();
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // stopping anyway
            }
        }
    }
}
