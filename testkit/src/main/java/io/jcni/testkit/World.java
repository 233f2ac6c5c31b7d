package io.jcni.testkit;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * testfixtures' {@link io.jcni.testfixtures.World} for the end-to-end suites: names {@code jts-ROLE-ID},
 * and commands in the host namespace through {@link Sh} (the installed product is run there).
 */
public final class World extends io.jcni.testfixtures.World {
    public World() throws IOException {
        super("jts");
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
}
