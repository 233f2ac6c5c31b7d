package io.jcni.runtime;

import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Delegates by finding the plugin on the caller's CNI_PATH and running it as a process. */
public final class ExecDelegator implements Delegator {
    private final PluginExec exec;

    public ExecDelegator() {
        this(new ProcessPluginExec());
    }

    public ExecDelegator(PluginExec exec) {
        this.exec = exec;
    }

    @Override
    public byte[] invoke(CniCommand command, String type, byte[] stdin, Map<String, String> env) {
        CniEnvironment cni = CniEnvironment.from(env).withCommand(command.name());
        List<Path> path = PluginExec.splitPath(cni.path());
        try {
            Path plugin = exec.find(type, path);
            return exec.run(plugin, stdin, cni);
        } catch (PluginException e) {
            throw e;
        } catch (CniException e) {
            throw PluginException.in(type, "", e);
        }
    }
}
