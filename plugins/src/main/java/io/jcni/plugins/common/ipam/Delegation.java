package io.jcni.plugins.common.ipam;

import io.jcni.plugins.skel.Background;
import io.jcni.plugins.skel.Phases;
import io.jcni.plugins.skel.Plugin;
import io.jcni.plugins.skel.PluginContext;
import io.jcni.plugins.skel.Skel;
import io.jcni.runtime.CniEnvironment;
import io.jcni.runtime.Delegator;
import io.jcni.runtime.ExecDelegator;
import io.jcni.runtime.PluginException;
import io.jcni.runtime.PluginExec;
import io.jcni.runtime.ProcessPluginExec;
import io.jcni.types.CniCommand;
import io.jcni.types.CniException;
import io.jcni.types.ErrorCode;
import io.jcni.types.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Calls IPAM and other delegate plugins. The delegate is looked up on CNI_PATH as always; when the
 * executable found there is one of jcni's own (its launcher or shim carries the marker
 * {@value #MARKER}) and the registry this delegation was given knows its type, it runs in this JVM
 * through the same skeleton, with the same registry and log, instead of a second JVM. The semantics
 * are those of the executable: a Go host-local earlier on CNI_PATH still wins.
 */
public final class Delegation implements Delegator {
    public static final String MARKER = io.jcni.common.Launcher.MARKER;
    private static final byte[] MARKER_BYTES = MARKER.getBytes(StandardCharsets.US_ASCII);
    /** Launchers are scripts and the shim is small; anything larger is not ours. */
    private static final long MAX_MARKED_SIZE = 1 << 20;

    private final Function<String, Supplier<Plugin>> registry;
    private final PrintStream log;
    private final Phases phases;
    private final Background background;
    private Delegator exec;

    /**
     * @param registry the in-process plugins by type (null for a type it does not have)
     * @param log where an in-process delegate's diagnostics and an executed one's stderr go
     */
    public Delegation(Function<String, Supplier<Plugin>> registry, PrintStream log) {
        this(registry, log, null);
    }

    /** As above, running non-jcni delegates through {@code exec} instead of as processes. */
    public Delegation(Function<String, Supplier<Plugin>> registry, PrintStream log, Delegator exec) {
        this(registry, log, exec, new Phases(), null);
    }

    private Delegation(Function<String, Supplier<Plugin>> registry, PrintStream log, Delegator exec, Phases phases,
                       Background background) {
        this.registry = registry;
        this.log = log;
        this.exec = exec;
        this.phases = phases;
        this.background = background;
    }

    /** The context for one {@link Skel#run} call: delegates through {@code registry}, diagnostics to {@code log}. */
    public static PluginContext context(Function<String, Supplier<Plugin>> registry, PrintStream log) {
        return new Delegation(registry, log).context();
    }

    /**
     * As {@link #context(Function, PrintStream)}, timing the call on {@code phases} and letting it
     * leave work to {@code background} (jcnid's; null: none).
     */
    public static PluginContext context(Function<String, Supplier<Plugin>> registry, PrintStream log, Phases phases,
                                        Background background) {
        return new Delegation(registry, log, null, phases, background).context();
    }

    /** A context with this delegation, its log, its phase clock and its background. */
    public PluginContext context() {
        return new PluginContext(this, log, phases, background);
    }

    /** Runs the delegate; its time, in-process or not, is the call's {@link Phases.Phase#IPAM} phase. */
    @Override
    public byte[] invoke(CniCommand command, String type, byte[] stdin, Map<String, String> env) {
        Phases.Phase prev = phases.enter(Phases.Phase.IPAM);
        try {
            return invokeDelegate(command, type, stdin, env);
        } finally {
            phases.enter(prev);
        }
    }

    private byte[] invokeDelegate(CniCommand command, String type, byte[] stdin, Map<String, String> env) {
        Supplier<Plugin> inProcess = registry.apply(type);
        if (inProcess != null) {
            Path exe;
            try {
                exe = PluginExec.findInPath(type, PluginExec.splitPath(env.get(CniEnvironment.PATH)));
            } catch (CniException e) {
                throw PluginException.in(type, "", e);
            }
            if (isJcni(exe)) return runInProcess(inProcess, command, type, stdin, env);
        }
        return exec().invoke(command, type, stdin, env);
    }

    /** Built on first use: most calls never start a process, and a standalone plugin's start-up counts. */
    private Delegator exec() {
        if (exec == null) {
            exec = new ExecDelegator(new ProcessPluginExec(ProcessPluginExec.DEFAULT_TIMEOUT, ProcessPluginExec.stderrTo(log), null));
        }
        return exec;
    }

    private byte[] runInProcess(Supplier<Plugin> plugin, CniCommand command, String type, byte[] stdin, Map<String, String> env) {
        Map<String, String> delegateEnv = new HashMap<>(env);
        delegateEnv.putAll(CniEnvironment.from(env).withCommand(command.name()).toMap());
        Skel.Outcome out = Skel.run(plugin, delegateEnv, stdin, context());
        if (out.exitCode() == 0) return out.stdout().getBytes(StandardCharsets.UTF_8);
        CniException err = null;
        try {
            err = CniException.fromJson(Json.parseObject(out.stdout()));
        } catch (RuntimeException ignored) {
            // fall through to the generic error below
        }
        if (err == null) err = new CniException(ErrorCode.INTERNAL, "delegate failed", out.stdout());
        throw PluginException.in(type, "", err);
    }

    /**
     * Whether {@code exe} carries the marker. jcnid asks this on every delegating request, and
     * reading and scanning the executable each time cost 2 % of its CPU under load: the answer is
     * kept per path for as long as the file's identity, size and modification time stay the same.
     */
    static boolean isJcni(Path exe) {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(exe, BasicFileAttributes.class);
        } catch (IOException e) {
            return false;
        }
        Marked seen = MARKED.get(exe);
        if (seen != null && seen.matches(a)) return seen.jcni();
        boolean jcni = a.size() <= MAX_MARKED_SIZE && carriesMarker(exe);
        if (MARKED.size() >= MAX_REMEMBERED) MARKED.clear(); // a CNI_PATH holds a few dozen plugins
        MARKED.put(exe, new Marked(a.fileKey(), a.size(), a.lastModifiedTime().toMillis(), jcni));
        return jcni;
    }

    private static final int MAX_REMEMBERED = 256;
    private static final Map<Path, Marked> MARKED = new ConcurrentHashMap<>();

    /** What {@link #isJcni} found for a file, and the attributes that say it is still that file. */
    private record Marked(Object fileKey, long size, long modifiedMillis, boolean jcni) {
        boolean matches(BasicFileAttributes a) {
            return Objects.equals(fileKey, a.fileKey()) && size == a.size() && modifiedMillis == a.lastModifiedTime().toMillis();
        }
    }

    /** Whether the file is a jcni launcher or shim: it carries the marker near its start. */
    private static boolean carriesMarker(Path exe) {
        try {
            byte[] content;
            try (InputStream in = Files.newInputStream(exe)) {
                content = in.readAllBytes();
            }
            outer:
            for (int i = 0; i + MARKER_BYTES.length <= content.length; i++) {
                for (int j = 0; j < MARKER_BYTES.length; j++) if (content[i + j] != MARKER_BYTES[j]) continue outer;
                return true;
            }
            return false;
        } catch (IOException e) {
            return false;
        }
    }
}
