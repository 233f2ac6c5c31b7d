package io.jcni.runtime;

import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;

/**
 * A plugin failed: it printed a CNI error, printed garbage, timed out, died or could not be run.
 * {@link #code()}, {@link #msg()} and {@link #details()} are the plugin's own when it printed an error
 * object; {@link #plugin()} names the plugin and {@link #stderr()} holds what it wrote to stderr.
 */
public class PluginException extends CniException {
    private final String plugin;
    private final String context;
    private final String stderr;

    public PluginException(String plugin, String context, int code, String msg, String details, String stderr) {
        super(code, msg, details);
        this.plugin = plugin;
        this.context = context == null ? "" : context;
        this.stderr = stderr == null ? "" : stderr;
    }

    public PluginException(String plugin, ErrorCode code, String msg, String details, String stderr) {
        this(plugin, "", code.code(), msg, details, stderr);
    }

    /** The same failure, described as happening in a given step (e.g. {@code type="bridge" (add)}). */
    public static PluginException in(String plugin, String context, CniException e) {
        String stderr = e instanceof PluginException p ? p.stderr : "";
        PluginException out = new PluginException(plugin, context, e.code(), e.msg(), e.details(), stderr);
        out.initCause(e.getCause() != null ? e.getCause() : e);
        return out;
    }

    public String plugin() {
        return plugin;
    }

    public String stderr() {
        return stderr;
    }

    @Override
    public String getMessage() {
        StringBuilder sb = new StringBuilder("plugin ");
        sb.append(context.isEmpty() ? "\"" + plugin + "\"" : context).append(" failed: ");
        ErrorCode known = ErrorCode.of(code());
        sb.append("[").append(code());
        if (known != null) sb.append(" ").append(known.meaning());
        sb.append("] ").append(msg());
        if (!details().isEmpty()) sb.append(": ").append(details());
        return sb.toString();
    }
}
