package io.jcni.runtime;

import io.jcni.types.CniCommand;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The six CNI_* variables a plugin is run with. Every one is always set (empty when it does not apply),
 * so values inherited from the caller's environment never leak into the plugin's protocol.
 */
public record CniEnvironment(String command, String containerId, String netns, String ifName, String args, String path) {

    public static final String COMMAND = "CNI_COMMAND";
    public static final String CONTAINERID = "CNI_CONTAINERID";
    public static final String NETNS = "CNI_NETNS";
    public static final String IFNAME = "CNI_IFNAME";
    public static final String ARGS = "CNI_ARGS";
    public static final String PATH = "CNI_PATH";

    public CniEnvironment {
        command = nz(command);
        containerId = nz(containerId);
        netns = nz(netns);
        ifName = nz(ifName);
        args = nz(args);
        path = nz(path);
    }

    /** For ADD, CHECK and DEL: everything from the runtime conf. */
    public static CniEnvironment of(CniCommand command, RuntimeConf rt, String path) {
        return new CniEnvironment(command.name(), rt.containerId(), rt.netns(), rt.ifName(), rt.argsString(), path);
    }

    /** For GC and STATUS, which act on a whole network: only the command and the path. */
    public static CniEnvironment networkWide(CniCommand command, String path) {
        return new CniEnvironment(command.name(), "", "", "", "", path);
    }

    /** Reads the variables from an environment (e.g. a plugin's own), missing ones as empty. */
    public static CniEnvironment from(Map<String, String> env) {
        return new CniEnvironment(env.get(COMMAND), env.get(CONTAINERID), env.get(NETNS), env.get(IFNAME), env.get(ARGS), env.get(PATH));
    }

    public CniEnvironment withCommand(String newCommand) {
        return new CniEnvironment(newCommand, containerId, netns, ifName, args, path);
    }

    public Map<String, String> toMap() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(COMMAND, command);
        m.put(CONTAINERID, containerId);
        m.put(NETNS, netns);
        m.put(ARGS, args);
        m.put(IFNAME, ifName);
        m.put(PATH, path);
        return m;
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }
}
