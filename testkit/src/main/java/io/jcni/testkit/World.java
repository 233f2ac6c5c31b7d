package io.jcni.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A private world for one test: a "host" network namespace where plugins run (so bridges, veths and
 * sysctls land there), container namespaces, and a scratch directory for configs, the result cache
 * and IPAM state. {@link #close()} removes every piece, whatever happened.
 */
public final class World implements AutoCloseable {
    public final String id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    public final String host = "jts-h-" + id;
    public final Path dir;
    /**
     * Synchronized: tests create containers from several threads (chaos ConcurrentAddsTest uses 8),
     * and a plain list lost names under that race, so close() left those namespaces behind.
     */
    private final List<String> namespaces = Collections.synchronizedList(new ArrayList<>());

    public World() throws IOException {
        dir = Files.createTempDirectory("jcni-world-");
        namespace(host);
    }

    /** Creates a namespace (lo up) and returns its path. */
    public String namespace(String name) {
        Sh.run("ip", "netns", "add", name).ok();
        namespaces.add(name);
        Sh.run("ip", "-n", name, "link", "set", "lo", "up").ok();
        return "/var/run/netns/" + name;
    }

    public String container(int i) {
        return namespace("jts-c" + i + "-" + id);
    }

    /** Deletes one of this world's namespaces before the world closes. */
    public void deleteNamespace(String name) {
        Sh.quiet("ip", "netns", "del", name);
        namespaces.remove(name);
    }

    /** Runs a command inside the host namespace with extra environment and stdin. */
    public Sh.Run inHost(Map<String, String> env, String stdin, String... cmd) {
        String[] full = new String[cmd.length + 4];
        full[0] = "ip";
        full[1] = "netns";
        full[2] = "exec";
        full[3] = host;
        System.arraycopy(cmd, 0, full, 4, cmd.length);
        return Sh.run(env, stdin, 120, full);
    }

    /** The CNI environment for one plugin call. */
    public static Map<String, String> cniEnv(String command, String containerId, String netns, String ifname, String path) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", containerId);
        env.put("CNI_NETNS", netns);
        env.put("CNI_IFNAME", ifname);
        env.put("CNI_PATH", path);
        return env;
    }

    @Override
    public void close() {
        List<String> all;
        synchronized (namespaces) {
            all = new ArrayList<>(namespaces);
        }
        for (int i = all.size() - 1; i >= 0; i--) Sh.quiet("ip", "netns", "del", all.get(i));
        Sh.quiet("rm", "-rf", dir.toString());
    }
}
