package io.jcni.linux;

import io.jcni.types.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway named network namespace for one test, with an rtnetlink client in it. Everything a
 * test creates lives in such namespaces; closing removes the namespace and, with it, its links.
 */
final class Scratch implements AutoCloseable {
    final String name;
    final Netns ns;
    final Rtnl rt;

    private Scratch(String name, Netns ns, Rtnl rt) {
        this.name = name;
        this.ns = ns;
        this.rt = rt;
    }

    static String uniqueName() {
        byte[] b = new byte[4];
        ThreadLocalRandom.current().nextBytes(b);
        return "jl-" + HexFormat.of().formatHex(b);
    }

    static Scratch create() {
        String name = uniqueName();
        Netns ns = Netns.create(name);
        try {
            return new Scratch(name, ns, Rtnl.open(ns));
        } catch (RuntimeException e) {
            ns.close();
            Netns.delete(name);
            throw e;
        }
    }

    @Override
    public void close() {
        try {
            rt.close();
        } finally {
            try {
                ns.close();
            } finally {
                Netns.delete(name);
            }
        }
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
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + cmd);
            }
            String s = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) throw new AssertionError(cmd + " exited " + p.exitValue() + ": " + s);
            return s;
        } catch (IOException e) {
            throw new AssertionError(cmd + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static int exitCode(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + cmd);
            }
            return p.exitValue();
        } catch (IOException e) {
            throw new AssertionError(cmd + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static int openFdCount() {
        String[] fds = new java.io.File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }
}
