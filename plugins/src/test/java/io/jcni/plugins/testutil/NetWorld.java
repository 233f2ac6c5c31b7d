package io.jcni.plugins.testutil;

import io.jcni.linux.Netns;
import io.jcni.plugins.PluginRegistry;
import io.jcni.plugins.common.ipam.Delegation;
import io.jcni.plugins.skel.Skel;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
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
 * testfixtures' {@link World} for root tests of the main plugins: its host namespace, open here so
 * plugins run in-process on its thread (their "host side" is that namespace), container namespaces
 * made on demand, and a CNI_PATH dir in front of /usr/lib/cni in which jcni IPAM launchers (marker
 * only, run in-process) and fake scripts can be placed. The world removes everything on {@link #close()}.
 */
public final class NetWorld implements AutoCloseable {
    private final World world;
    public final String hostName;
    public final Netns host;
    public final Path dir;
    public final Path bin;
    public final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    private NetWorld(World world) throws IOException {
        this.world = world;
        this.hostName = world.host;
        this.dir = world.dir;
        this.bin = Files.createDirectories(dir.resolve("bin"));
        this.host = Netns.open(World.path(hostName));
        world.onClose("host netns handle", host);
    }

    public static NetWorld create() throws IOException {
        World world = new World("jb");
        try {
            return new NetWorld(world);
        } catch (IOException | RuntimeException e) {
            world.close();
            throw e;
        }
    }

    /** A new container netns; returns its path. */
    public String container() {
        return world.container();
    }

    public static String nsName(String path) {
        return World.nsName(path);
    }

    /** Deletes a container netns early (e.g. to test DEL without it). */
    public void deleteContainer(String path) {
        world.deleteNamespace(path);
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
    public String reference(String type, Map<String, String> env, String conf) {
        return World.run(hostName, env, conf, 30, "/usr/lib/cni/" + type).ok("reference " + type);
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

    /** CMD... in namespace NS (a name or path). */
    public static Exec in(String nsPathOrName, String... cmd) {
        Proc.Out out = World.in(nsPathOrName, cmd);
        return new Exec(out.rc(), out.out());
    }

    /** Pings (up to 3 tries of one packet each) from a netns. */
    public static boolean ping(String fromNs, String ip) {
        return World.ping(fromNs, ip);
    }

    @Override
    public void close() {
        world.close();
    }
}
