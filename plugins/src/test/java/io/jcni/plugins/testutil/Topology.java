package io.jcni.plugins.testutil;

import io.jcni.linux.Netns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A private world for tests that touch the network: a "host" namespace and container namespaces,
 * all uniquely named jp-*, wired with `ip` (tests only). Closing kills the servers started here
 * and deletes every namespace (which deletes their nftables tables). Nothing touches the root
 * namespace: every command runs with `ip netns exec` / `ip -n` in a namespace created here.
 */
public final class Topology implements AutoCloseable {
    public final String prefix = "jp-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x100000, 0xffffff));
    public final String host = prefix + "-h";
    public Netns hostNs;
    private final List<String> namespaces = new ArrayList<>();
    private final List<Process> servers = new ArrayList<>();

    public Topology() {
        hostNs = Netns.create(host);
        namespaces.add(host);
        sh("ip", "-n", host, "link", "set", "lo", "up");
        sh("ip", "netns", "exec", host, "sysctl", "-qw", "net.ipv4.ip_forward=1");
        sh("ip", "netns", "exec", host, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
    }

    /** A bridge in the host namespace with these addresses (e.g. 10.77.0.1/24). */
    public void bridge(String name, String... addrs) {
        sh("ip", "-n", host, "link", "add", name, "type", "bridge");
        for (String a : addrs) sh("ip", "-n", host, "addr", "add", a, "dev", name, "nodad");
        sh("ip", "-n", host, "link", "set", name, "up");
    }

    /**
     * A container namespace NAME with eth0 (veth to the host, host side vNAME on {@code bridge}),
     * its addresses, and default routes via the gateways. Returns the namespace's name.
     */
    public String container(String name, String bridge, String[] addrs, String[] gateways) {
        String ns = prefix + "-" + name;
        Netns.create(ns).close();
        namespaces.add(ns);
        String hostSide = "v" + name;
        sh("ip", "-n", host, "link", "add", hostSide, "type", "veth", "peer", "name", "eth0", "netns", ns);
        sh("ip", "-n", host, "link", "set", hostSide, "master", bridge, "up");
        sh("ip", "-n", ns, "link", "set", "lo", "up");
        sh("ip", "-n", ns, "link", "set", "eth0", "up");
        for (String a : addrs) sh("ip", "-n", ns, "addr", "add", a, "dev", "eth0", "nodad");
        for (String g : gateways) sh("ip", "-n", ns, g.contains(":") ? "-6" : "-4", "route", "add", "default", "via", g);
        return ns;
    }

    public String nsPath(String ns) {
        return Netns.pathOf(ns).toString();
    }

    /** busybox httpd on {@code port} in {@code ns}, answering {@code body} at /. */
    public void httpd(String ns, int port, String body, Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("index.html"), body);
        Process p = new ProcessBuilder("ip", "netns", "exec", ns, "busybox", "httpd", "-f", "-p", "[::]:" + port, "-h", dir.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        servers.add(p);
        // Wait until it answers inside its own namespace.
        for (int i = 0; i < 50; i++) {
            if (body.equals(curl(ns, "http://127.0.0.1:" + port + "/"))) return;
            Thread.sleep(100);
        }
        throw new AssertionError("httpd in " + ns + " did not come up");
    }

    /** GET from inside {@code ns}; the body, or null when the connection fails (2 s timeout). */
    public String curl(String ns, String url) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "exec", ns, "curl", "-s", "-g", "--max-time", "2", url)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return null;
        }
        return p.exitValue() == 0 ? out : null;
    }

    /** Output of a command; fails on a non-zero exit. */
    public static String sh(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) throw new AssertionError("timeout: " + String.join(" ", cmd));
            if (p.exitValue() != 0) throw new AssertionError(String.join(" ", cmd) + " failed: " + out);
            return out;
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** `nft ARGS` in the host namespace. */
    public String nft(String... args) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", host, "nft"));
        cmd.addAll(List.of(args));
        return sh(cmd.toArray(String[]::new));
    }

    @Override
    public void close() {
        for (Process p : servers) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        if (hostNs != null) hostNs.close();
        for (String ns : namespaces) {
            try {
                Netns.delete(ns);
            } catch (RuntimeException e) {
                // keep deleting the others
            }
        }
    }
}
