package io.jcni.plugins.testutil;

import io.jcni.linux.Netns;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Skel;
import io.jcni.testfixtures.Proc;
import io.jcni.types.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A private little world for root tests of the main plugins: a fresh netns standing in for the
 * host (plugins run on its thread, so their "host side" is this netns), container netns made on
 * demand, and a temp CNI_PATH dir in front of /usr/lib/cni in which jcni IPAM launchers (marker
 * only, run in-process) and fake scripts can be placed. Everything goes away on {@link #close()}.
 */
public final class NetWorld implements AutoCloseable {
    private static final SecureRandom RANDOM = new SecureRandom();

    public final String hostName;
    public final Netns host;
    public final Path dir;
    public final Path bin;
    private final List<String> containers = new ArrayList<>();
    public final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    private NetWorld(String hostName, Netns host, Path dir) throws IOException {
        this.hostName = hostName;
        this.host = host;
        this.dir = dir;
        this.bin = Files.createDirectories(dir.resolve("bin"));
    }

    public static NetWorld create() throws IOException {
        String name = name();
        Netns ns = Netns.create(name);
        try {
            return new NetWorld(name, ns, Files.createTempDirectory("jb-world"));
        } catch (IOException | RuntimeException e) {
            ns.close();
            Netns.delete(name);
            throw e;
        }
    }

    public static String name() {
        byte[] b = new byte[4];
        RANDOM.nextBytes(b);
        return "jb-" + HexFormat.of().formatHex(b);
    }

    /** A new container netns; returns its path. */
    public String container() {
        String name = name();
        Netns.create(name).close();
        containers.add(name);
        return Netns.pathOf(name).toString();
    }

    public static String nsName(String path) {
        return Path.of(path).getFileName().toString();
    }

    /** Deletes a container netns early (e.g. to test DEL without it). */
    public void deleteContainer(String path) {
        String name = nsName(path);
        if (containers.remove(name)) Netns.delete(name);
    }

    /** Makes jcni's in-process plugin {@code type} findable on CNI_PATH (a launcher that is never run). */
    public void jcniLauncher(String type) throws IOException {
        script(type, "#!/bin/sh\n# " + Delegation.MARKER + "\nexit 99\n");
    }

    public void script(String name, String content) throws IOException {
        Path p = bin.resolve(name);
        Files.writeString(p, content);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    public String cniPath() {
        return bin + ":/usr/lib/cni";
    }

    public Map<String, String> env(String command, String containerId, String netns, String ifname) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", containerId);
        if (netns != null) env.put("CNI_NETNS", netns);
        env.put("CNI_IFNAME", ifname);
        env.put("CNI_PATH", cniPath());
        return env;
    }

    /** Runs jcni's plugin in-process on the host netns's thread. */
    public Skel.Outcome run(String type, Map<String, String> env, String conf) {
        return host.run(() -> Skel.run(PluginRegistry.lookup(type), env, conf.getBytes(StandardCharsets.UTF_8), PluginRegistry.context(
                new PrintStream(stderr, true, StandardCharsets.UTF_8))));
    }

    public Map<String, Object> ok(String type, Map<String, String> env, String conf) {
        Skel.Outcome o = run(type, env, conf);
        if (o.exitCode() != 0) {
            throw new AssertionError(type + " " + env.get("CNI_COMMAND") + " failed: " + o.stdout() + "\nstderr: " + stderr);
        }
        return o.stdout().isEmpty() ? Map.of() : Json.parseObject(o.stdout());
    }

    public Map<String, Object> fails(String type, Map<String, String> env, String conf) {
        Skel.Outcome o = run(type, env, conf);
        if (o.exitCode() == 0) throw new AssertionError(type + " " + env.get("CNI_COMMAND") + " unexpectedly succeeded: " + o.stdout());
        return Json.parseObject(o.stdout());
    }

    /** Runs the reference Go plugin /usr/lib/cni/TYPE inside the host netns; returns its stdout. */
    public String reference(String type, Map<String, String> env, String conf) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", hostName, "env"));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.add("/usr/lib/cni/" + type);
        Path in = Files.writeString(dir.resolve("ref-stdin.json"), conf);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(in.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("reference " + type + " timed out");
        }
        if (p.exitValue() != 0) throw new AssertionError("reference " + type + " failed: " + out);
        return out;
    }

    /** Runs a command, bounded; returns exit code and output. */
    public static Exec sh(String... cmd) {
        Proc.Out out = Proc.run(new ProcessBuilder(cmd).redirectErrorStream(true), "", 20);
        return new Exec(out.rc(), out.out());
    }

    public record Exec(int rc, String out) {}

    /** A result with MACs and random veth names masked, to compare ours with the reference plugin's. */
    public static Object normalize(Map<String, Object> result) {
        String s = io.jcni.types.Json.write(result);
        s = s.replaceAll("[0-9a-f]{2}(:[0-9a-f]{2}){5}", "MAC").replaceAll("veth[0-9a-f]{8}", "VETH");
        return io.jcni.types.Json.parseObject(s);
    }

    /** ip netns exec NS CMD... */
    public static Exec in(String nsPathOrName, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", nsName(nsPathOrName)));
        c.addAll(List.of(cmd));
        return sh(c.toArray(String[]::new));
    }

    /** Pings (up to 3 tries of one packet each) from a netns. */
    public static boolean ping(String fromNs, String ip) {
        for (int i = 0; i < 3; i++) {
            if (in(fromNs, "ping", ip.contains(":") ? "-6" : "-4", "-c1", "-W1", ip).rc() == 0) return true;
        }
        return false;
    }

    @Override
    public void close() {
        host.close();
        for (String c : containers) {
            try {
                Netns.delete(c);
            } catch (RuntimeException ignored) {
                // keep cleaning
            }
        }
        containers.clear();
        try {
            Netns.delete(hostName);
        } catch (RuntimeException ignored) {
            // already gone
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // temp dir
        }
    }
}
