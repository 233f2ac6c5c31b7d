package io.jcni.runtime;

import io.jcni.types.CniCommand;
import io.jcni.types.Result;
import java.util.Map;

/**
 * How a plugin calls another plugin, typically its IPAM plugin (libcni's invoke.DelegateAdd/Del/Check):
 * the delegate gets the caller's full stdin config and the caller's CNI environment with only
 * CNI_COMMAND replaced.
 *
 * <p>{@link ExecDelegator} runs the delegate as a process found on CNI_PATH; jcni's plugins may supply an
 * in-process implementation for their own IPAM plugins.
 */
public interface Delegator {

    /**
     * Runs {@code type} with {@code command}.
     *
     * @param env the calling plugin's environment; its CNI_* variables (CNI_PATH to find the delegate)
     *     are passed on, CNI_COMMAND replaced by {@code command}
     * @return the delegate's stdout
     * @throws PluginException when the delegate fails; its code, msg and details are the delegate's
     */
    byte[] invoke(CniCommand command, String type, byte[] stdin, Map<String, String> env);

    /** ADD: the delegate's result, decoded (in its own version; a missing version means the config's). */
    default Result add(String type, byte[] stdin, Map<String, String> env) {
        byte[] out = invoke(CniCommand.ADD, type, stdin, env);
        return ResultParser.parse(out, ResultParser.configVersion(stdin), type);
    }

    /** ADD, returning the delegate's result JSON untouched but for a missing cniVersion. */
    default Map<String, Object> addJson(String type, byte[] stdin, Map<String, String> env) {
        byte[] out = invoke(CniCommand.ADD, type, stdin, env);
        return ResultParser.parseJson(out, ResultParser.configVersion(stdin), type);
    }

    default void check(String type, byte[] stdin, Map<String, String> env) {
        invoke(CniCommand.CHECK, type, stdin, env);
    }

    default void del(String type, byte[] stdin, Map<String, String> env) {
        invoke(CniCommand.DEL, type, stdin, env);
    }

    default void gc(String type, byte[] stdin, Map<String, String> env) {
        invoke(CniCommand.GC, type, stdin, env);
    }

    default void status(String type, byte[] stdin, Map<String, String> env) {
        invoke(CniCommand.STATUS, type, stdin, env);
    }
}
