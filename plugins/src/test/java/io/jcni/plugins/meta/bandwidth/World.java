package io.jcni.plugins.meta.bandwidth;

import io.jcni.linux.Netns;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Proc;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * testfixtures' world for the bandwidth and sbr tests: its "host" namespace (the plugin runs on its
 * thread, so that is the host side it sees) and container namespaces, names {@code jw-ROLE-ID},
 * with the tc and traffic helpers these tests share. Closing deletes every namespace, and with them
 * all links, ifbs, qdiscs, rules and routes in them.
 */
public final class World implements AutoCloseable {
    private final io.jcni.testfixtures.World world;
    public final String host;
    public final Netns hostNs;
    private int namespaces;

    private World() throws IOException {
        world = io.jcni.testfixtures.World.create();
        host = world.host;
        hostNs = Netns.open(path(host));
        world.onClose("host netns handle", hostNs);
    }

    public static World create() {
        try {
            return new World();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new namespace of this world, {@code jw-SUFFIXn-ID}, deleted on close. */
    public String newNs(String suffix) {
        return io.jcni.testfixtures.World.nsName(world.namespace(world.name(suffix + ++namespaces)));
    }

    public static String path(String ns) {
        return io.jcni.testfixtures.World.path(ns);
    }

    /** A veth with {@code hostIf} in the host ns and {@code ctrIf} in {@code ctr}, both up, with addresses. */
    public void veth(String hostIf, String ctr, String ctrIf, String hostCidr, String ctrCidr) {
        io.jcni.testfixtures.World.veth(host, hostIf, ctr, ctrIf);
        if (hostCidr != null) ip(host, "addr", "add", hostCidr, "dev", hostIf);
        if (ctrCidr != null) ip(ctr, "addr", "add", ctrCidr, "dev", ctrIf);
    }

    /** Runs a jcni plugin in-process on the host namespace's thread. */
    public Skel.Outcome call(PluginCall c, String command, String conf) {
        return hostNs.run(() -> c.run(command, conf));
    }

    public Map<String, Object> ok(PluginCall c, String command, String conf) {
        return hostNs.run(() -> c.ok(command, conf));
    }

    public Map<String, Object> fails(PluginCall c, String command, String conf) {
        return hostNs.run(() -> c.fails(command, conf));
    }

    public String ip(String ns, String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-n", ns));
        cmd.addAll(List.of(args));
        return exec(cmd, null, true);
    }

    public List<Map<String, Object>> ipJson(String ns, String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-j", "-n", ns));
        cmd.addAll(List.of(args));
        return jsonList(exec(cmd, null, true));
    }

    public List<Map<String, Object>> tcJson(String ns, String... args) {
        List<String> cmd = new ArrayList<>(List.of("tc", "-j", "-n", ns));
        cmd.addAll(List.of(args));
        return jsonList(exec(cmd, null, true));
    }

    public static List<Map<String, Object>> jsonList(String out) {
        if (out.isBlank()) return List.of();
        List<Map<String, Object>> list = new ArrayList<>();
        for (Object o : Json.asList(Json.parse(out))) list.add(Json.asObject(o));
        return list;
    }

    /** Runs a command with a 30 s limit; with {@code check}, a non-zero exit fails the test. */
    public static String exec(List<String> cmd, Map<String, String> env, boolean check) {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (env != null) pb.environment().putAll(env);
        Proc.Out out = Proc.run(pb, "", 30);
        return check ? out.ok(cmd) : out.out();
    }

    /** Runs {@code stdin | ip netns exec HOST binary} with {@code env}: a Go reference plugin on the host side. */
    public String goPlugin(String binary, Map<String, String> env, String stdin) {
        return io.jcni.testfixtures.World.run(host, env, stdin, 30, binary).ok(binary);
    }

    /**
     * Sends {@code bytes} over TCP from a client in {@code from} to a server bound to
     * {@code toIp:port} in {@code to}; returns the milliseconds from connect until the server has
     * read them all. Every wait is bounded (about 60 s at most).
     */
    public static long transfer(Netns from, Netns to, String toIp, int port, int bytes) throws Exception {
        AtomicLong received = new AtomicLong();
        AtomicLong doneAt = new AtomicLong();
        try (ServerSocket ss = to.run(() -> new ServerSocket(port, 1, InetAddress.getByName(toIp)))) {
            ss.setSoTimeout(15_000);
            Thread reader = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = ss.accept()) {
                    s.setSoTimeout(30_000);
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[65536];
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        if (received.addAndGet(n) >= bytes) doneAt.set(System.nanoTime());
                    }
                } catch (IOException ignored) {
                    // received tells the test what arrived
                }
            });
            long start = from.run(() -> {
                try (Socket s = new Socket()) {
                    s.setSoTimeout(30_000);
                    s.connect(new InetSocketAddress(InetAddress.getByName(toIp), port), 5_000);
                    long t0 = System.nanoTime();
                    OutputStream out = s.getOutputStream();
                    byte[] chunk = new byte[16384];
                    for (int sent = 0; sent < bytes; sent += chunk.length) out.write(chunk, 0, Math.min(chunk.length, bytes - sent));
                    out.flush();
                    s.shutdownOutput();
                    return t0;
                }
            });
            reader.join(45_000);
            if (received.get() < bytes) throw new AssertionError("only " + received.get() + " of " + bytes + " bytes arrived");
            return (doneAt.get() - start) / 1_000_000;
        }
    }

    @Override
    public void close() {
        world.close();
    }
}
