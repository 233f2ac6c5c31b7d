package io.jcni.plugins.testutil;

import io.jcni.linux.Netns;
import io.jcni.testfixtures.Proc;
import io.jcni.testfixtures.World;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * testfixtures' {@link World} wired for the meta plugins' tests: a forwarding "host" namespace
 * (open here, for plugins run on its thread) with bridges, and containers on them, names
 * {@code jp-ROLE-ID}. The world kills the servers started here and deletes every namespace
 * (which deletes their nftables tables) on close.
 */
public final class Topology implements AutoCloseable {
    private final World world;
    public final String host;
    public final Netns hostNs;

    public Topology() {
        try {
            world = new World("jp");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        host = world.host;
        hostNs = Netns.open(World.path(host));
        world.onClose("host netns handle", hostNs);
        World.sysctl(host, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1");
    }

    /** A bridge in the host namespace with these addresses (e.g. 10.77.0.1/24). */
    public void bridge(String name, String... addrs) {
        World.bridge(host, name, addrs);
    }

    /**
     * A container namespace NAME with eth0 (veth to the host, host side vNAME on {@code bridge}),
     * its addresses, and default routes via the gateways. Returns the namespace's name.
     */
    public String container(String name, String bridge, String[] addrs, String[] gateways) {
        String ns = World.nsName(world.namespace(world.name(name)));
        World.attach(host, bridge, "v" + name, ns, "eth0", addrs);
        for (String g : gateways) World.ip(ns, g.contains(":") ? "-6" : "-4", "route", "add", "default", "via", g);
        return ns;
    }

    public String nsPath(String ns) {
        return World.path(ns);
    }

    /** busybox httpd on {@code port} in {@code ns}, answering {@code body} at /. */
    public void httpd(String ns, int port, String body, Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("index.html"), body);
        world.start(new ProcessBuilder(World.exec(ns, List.of("busybox", "httpd", "-f", "-p", "[::]:" + port, "-h", dir.toString())))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD));
        // Wait until it answers inside its own namespace.
        for (int i = 0; i < 50; i++) {
            if (body.equals(curl(ns, "http://127.0.0.1:" + port + "/"))) return;
            Thread.sleep(100);
        }
        throw new AssertionError("httpd in " + ns + " did not come up");
    }

    /** GET from inside {@code ns}; the body, or null when the connection fails (2 s timeout). */
    public String curl(String ns, String url) {
        Proc.Out out = World.run(ns, null, null, 10, "curl", "-s", "-g", "--max-time", "2", url);
        return out.rc() == 0 ? out.out() : null;
    }

    /** Output of a command; fails on a non-zero exit. */
    public static String sh(String... cmd) {
        return Proc.ok(cmd);
    }

    /** `nft ARGS` in the host namespace. */
    public String nft(String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("nft"));
        cmd.addAll(List.of(args));
        return World.ok(host, cmd.toArray(String[]::new));
    }

    @Override
    public void close() {
        world.close();
    }
}
