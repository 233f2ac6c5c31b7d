package io.jcni.chaos;

import io.jcni.testkit.Installed;
import io.jcni.testkit.Sh;
import io.jcni.testkit.World;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The "full chain" (bridge with ipMasq and host-local, portmap, bandwidth, firewall) as a
 * network of one {@link World}: every piece of state it can write lives under the world's
 * directory (IPAM reservations, nft ownership state, the runtime's result cache) or in the world's
 * host namespace (links, nft table, qdiscs), so {@link Leaks} can count all of it.
 */
final class ChainNetwork {
    final World world;
    final Installed jcni;
    final String name;
    final String bridge;
    final Path confDir;
    final Path ipamDir;
    final Path nftDir;
    final Path cacheDir;

    ChainNetwork(World world, Installed jcni) throws IOException {
        this.world = world;
        this.jcni = jcni;
        this.name = "chaos" + world.id;
        this.bridge = "jchbr" + world.id.substring(0, 6);
        this.confDir = world.dir.resolve("net.d");
        this.ipamDir = world.dir.resolve("ipam");
        this.nftDir = world.dir.resolve("nft");
        this.cacheDir = world.dir.resolve("cache");
        Files.createDirectories(confDir);
        Files.writeString(confDir.resolve("10-chaos.conflist"), conflist());
    }

    String conflist() {
        return """
            {"cniVersion":"1.1.0","name":"%1$s","plugins":[
              {"type":"bridge","bridge":"%2$s","isGateway":true,"ipMasq":true,"dataDir":"%4$s",
               "ipam":{"type":"host-local","ranges":[[{"subnet":"10.140.0.0/16"}]],"dataDir":"%3$s"}},
              {"type":"portmap","capabilities":{"portMappings":true},"dataDir":"%4$s"},
              {"type":"bandwidth","ingressRate":8000000,"ingressBurst":80000,"egressRate":8000000,"egressBurst":80000},
              {"type":"firewall","dataDir":"%4$s"}
            ]}
            """.formatted(name, bridge, ipamDir, nftDir);
    }

    /** The container's port mapping: one per container, so portmap has an element of its own. */
    static String capArgs(int container) {
        return "{\"portMappings\":[{\"hostPort\":%d,\"containerPort\":80,\"protocol\":\"tcp\"}]}".formatted(20000 + container);
    }

    /** The environment of the {@code jcni} command for this network. */
    Map<String, String> cliEnv(int container) {
        Map<String, String> env = new HashMap<>();
        env.put("NETCONFPATH", confDir.toString());
        env.put("CNI_PATH", jcni.bin.toString());
        env.put("JCNI_CACHE_DIR", cacheDir.toString());
        env.put("CAP_ARGS", capArgs(container));
        return env;
    }

    /** {@code jcni ARGS} run in the world's host namespace, as a runtime on the node would. */
    String[] cli(String... args) {
        String[] cmd = new String[args.length + 5];
        cmd[0] = "ip";
        cmd[1] = "netns";
        cmd[2] = "exec";
        cmd[3] = world.host;
        cmd[4] = jcni.jcni.toString();
        System.arraycopy(args, 0, cmd, 5, args.length);
        return cmd;
    }

    Sh.Run run(int container, long timeoutSeconds, String... args) {
        return Sh.run(cliEnv(container), null, timeoutSeconds, cli(args));
    }

    /** cnitool's container ID for a netns path, which {@code jcni add} uses. */
    static String containerId(String netnsPath) {
        return io.jcni.cli.Main.containerId(netnsPath);
    }
}
