package io.jcni.linux;

import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A throwaway named network namespace for one test (testfixtures' {@link World}: its host
 * namespace), with an rtnetlink client in it. Everything a test creates lives in such namespaces;
 * closing removes the namespace and, with it, its links.
 */
final class Scratch implements AutoCloseable {
    final String name;
    final Netns ns;
    final Rtnl rt;
    private final World world;

    private Scratch(World world) {
        this.world = world;
        this.name = world.host;
        this.ns = Netns.open(World.path(name));
        world.onClose("netns handle", ns);
        this.rt = Rtnl.open(ns);
        world.onClose("rtnetlink socket", rt);
    }

    /** A name no namespace of this or another test has (for a namespace a test makes with Netns itself). */
    static String uniqueName() {
        byte[] b = new byte[4];
        ThreadLocalRandom.current().nextBytes(b);
        return "jl-" + HexFormat.of().formatHex(b);
    }

    static Scratch create() {
        World world;
        try {
            world = new World("jl");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            return new Scratch(world);
        } catch (RuntimeException e) {
            world.close();
            throw e;
        }
    }

    @Override
    public void close() {
        world.close();
    }

    /** Runs {@code ip -n NAME args...}; fails the test on a non-zero exit. */
    String ip(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-n", name));
        cmd.addAll(List.of(args));
        return exec(cmd);
    }

    /** {@code ip -j -n NAME args...} parsed. */
    List<Map<String, Object>> ipJson(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "-j", "-n", name));
        cmd.addAll(List.of(args));
        return jsonList(exec(cmd));
    }

    /** {@code tc -j -n NAME args...} parsed. */
    List<Map<String, Object>> tcJson(String... args) {
        List<String> cmd = new ArrayList<>(List.of("tc", "-j", "-n", name));
        cmd.addAll(List.of(args));
        return jsonList(exec(cmd));
    }

    static List<Map<String, Object>> jsonList(String out) {
        if (out.isBlank()) return List.of();
        List<Map<String, Object>> list = new ArrayList<>();
        for (Object o : Json.asList(Json.parse(out))) list.add(Json.asObject(o));
        return list;
    }

    static String exec(List<String> cmd) {
        Proc.Out out = Proc.run(new ProcessBuilder(cmd).redirectErrorStream(true), null, 20);
        return out.ok(cmd);
    }

    static int exitCode(List<String> cmd) {
        return Proc.run(new ProcessBuilder(cmd).redirectErrorStream(true), null, 20).rc();
    }

    static int openFdCount() {
        String[] fds = new java.io.File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }
}
