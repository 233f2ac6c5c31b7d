package io.jcni.plugins.meta.bandwidth;

import io.jcni.linux.Netns;
import io.jcni.plugins.skel.Skel;
import io.jcni.plugins.testutil.PluginCall;
import io.jcni.testfixtures.Proc;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A private little world for one root test: a "host" netns (the plugin runs on its thread, so
 * that is the host side it sees) and container netns, all uniquely named {@code jw-...}. Closing
 * deletes every namespace, and with them all links, ifbs, qdiscs, rules and routes in them.
 */
public final class World implements AutoCloseable {
    public final String host;
    public final Netns hostNs;
    private final List<String> names = new ArrayList<>();
    private final List<Netns> open = new ArrayList<>();

    private World() {
        host = newNs("h");
        hostNs = open.getLast();
    }

    public static World create() {
        return new World();
    }

    /** A new namespace named jw-RANDOM-suffix, deleted on close. */
    public String newNs(String suffix) {
        byte[] b = new byte[4];
        ThreadLocalRandom.current().nextBytes(b);
        String name = "jw-" + HexFormat.of().formatHex(b) + suffix;
        Netns ns = Netns.create(name);
        names.add(name);
        open.add(ns);
        return name;
    }

    public static String path(String ns) {
        return Netns.pathOf(ns).toString();
    }

    /** A veth with {@code hostIf} in the host ns and {@code ctrIf} in {@code ctr}, both up, with addresses. */
    public void veth(String hostIf, String ctr, String ctrIf, String hostCidr, String ctrCidr) {
        ip(host, "link", "add", hostIf, "type", "veth", "peer", "name", ctrIf, "netns", ctr);
        ip(host, "link", "set", hostIf, "up");
        ip(ctr, "link", "set", ctrIf, "up");
        ip(ctr, "link", "set", "lo", "up");
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

    /** Runs {@code stdin | ip netns exec HOST env ... binary}: a Go reference plugin on the host side. */
    public String goPlugin(String binary, Map<String, String> env, String stdin) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", host, "env"));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.add(binary);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
            try (OutputStream o = p.getOutputStream()) {
                o.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + cmd);
            }
            String s = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) throw new AssertionError(binary + " failed: " + s);
            return s;
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
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
        for (Netns ns : open) {
            try {
                ns.close();
            } catch (RuntimeException ignored) {
                // keep deleting the rest
            }
        }
        for (String n : names) {
            try {
                Netns.delete(n);
            } catch (RuntimeException ignored) {
                // already gone
            }
        }
    }
}
