package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds and runs plugin executables (libcni's invoke.Exec). Tests and in-process plugin hosts may
 * substitute their own implementation.
 */
public interface PluginExec {

    /**
     * Runs a plugin to completion.
     *
     * @param plugin the executable
     * @param stdin the network configuration to write to its stdin
     * @param env the CNI variables; they override any inherited variable of the same name
     * @return what the plugin printed on stdout when it exited with status 0
     * @throws PluginException when it failed in any way (its error object, garbage, timeout, signal)
     */
    byte[] run(Path plugin, byte[] stdin, CniEnvironment env);

    /** The first executable named {@code type} in {@code path}. */
    default Path find(String type, List<Path> path) {
        return findInPath(type, path);
    }

    /** libcni's FindInPath: the first dir that holds an executable regular file of that name. */
    static Path findInPath(String type, List<Path> path) {
        if (type == null || type.isEmpty()) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "no plugin name provided");
        }
        if (type.indexOf('/') >= 0 || type.equals(".") || type.equals("..")) {
            throw new CniException(ErrorCode.INVALID_NETWORK_CONFIG, "invalid plugin name", "\"" + type + "\" must not contain '/'");
        }
        if (path == null || path.isEmpty()) {
            throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "no paths provided",
                    "cannot find plugin \"" + type + "\": CNI_PATH is empty; set it to the directory holding the plugins,"
                            + " e.g. CNI_PATH=/opt/cni/bin (where jcni's package and the reference plugins install them)");
        }
        List<String> tried = new ArrayList<>();
        for (Path dir : path) {
            Path p = dir.resolve(type);
            tried.add(p.toString());
            if (Files.isRegularFile(p) && Files.isExecutable(p)) return p;
        }
        throw new CniException(ErrorCode.PLUGIN_NOT_AVAILABLE, "failed to find plugin \"" + type + "\" in path " + path,
                "tried " + String.join(", ", tried));
    }

    /** Splits a CNI_PATH-style list (':'-separated); empty entries are dropped. */
    static List<Path> splitPath(String s) {
        List<Path> out = new ArrayList<>();
        if (s == null) return out;
        for (String p : s.split(":")) if (!p.isEmpty()) out.add(Path.of(p));
        return out;
    }

    static String joinPath(List<Path> path) {
        StringBuilder sb = new StringBuilder();
        for (Path p : path) {
            if (!sb.isEmpty()) sb.append(':');
            sb.append(p);
        }
        return sb.toString();
    }
}
