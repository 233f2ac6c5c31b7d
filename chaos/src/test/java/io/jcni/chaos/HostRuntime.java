package io.jcni.chaos;

import io.jcni.runtime.Cni;
import io.jcni.runtime.ConfigLoader;
import io.jcni.runtime.ProcessPluginExec;
import io.jcni.runtime.RuntimeConf;
import io.jcni.types.Json;
import io.jcni.types.NetConfList;
import io.jcni.types.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The jcni runtime library inside the test JVM driving a {@link ChainNetwork}, for runs where a
 * {@code jcni} JVM per container would cost too much (hundreds of concurrent ADDs). The plugins
 * are still the installed executables: CNI_PATH is a directory of wrappers that exec each one in
 * the world's host namespace, so nothing runs in the node's own namespace.
 */
final class HostRuntime {
    static final List<String> TYPES = List.of("bridge", "host-local", "portmap", "bandwidth", "firewall");

    final ChainNetwork net;
    final Cni cni;
    final NetConfList list;
    final Queue<String> stderr = new ConcurrentLinkedQueue<>();

    HostRuntime(ChainNetwork net) throws IOException {
        this.net = net;
        Path bin = net.world.dir.resolve("in-host-bin");
        Files.createDirectories(bin);
        for (String type : TYPES) {
            Path wrapper = bin.resolve(type);
            Files.writeString(wrapper, "#!/bin/sh\nexec ip netns exec " + net.world.host + " " + net.jcni.plugin(type) + " \"$@\"\n");
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        this.cni = new Cni(List.of(bin), net.cacheDir, new ProcessPluginExec(Duration.ofMinutes(5), stderr::add, null));
        this.list = ConfigLoader.load(net.confDir, net.name);
    }

    static RuntimeConf attachment(int container, String netns) {
        return new RuntimeConf(ChainNetwork.containerId(netns), netns, "eth0", List.of(), Json.parseObject(ChainNetwork.capArgs(container)));
    }

    Result add(int container, String netns) {
        return cni.addNetworkList(list, attachment(container, netns));
    }

    void del(int container, String netns) {
        cni.delNetworkList(list, attachment(container, netns));
    }
}
