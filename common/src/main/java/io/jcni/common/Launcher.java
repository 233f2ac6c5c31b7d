package io.jcni.common;

import java.util.ArrayList;
import java.util.List;

/**
 * The one source of the JVM options jcni runs with and of the launcher scripts that start it:
 * scripts/install.sh (and so the package and the tests' installations) prints them with
 * {@link #main}, the Docker driver writes its launchers with {@link #script}, and the tests that
 * start a JVM of their own take {@link #jvmOptions}.
 */
public final class Launcher {
    private Launcher() {}

    /** What runs in the JVM: its options differ. */
    public enum Kind {
        /** A plugin (or the jcni command): a JVM that lives for one call. */
        PLUGIN,
        /** jcnid: a JVM that lives long and serves many calls. */
        DAEMON
    }

    /** The marker a launcher carries on its second line; delegation looks for it (plugins' Delegation.MARKER). */
    public static final String MARKER = "jcni-launcher";

    /** jcnid's heap limit (why: {@link #jvmOptions}); also what {@code jcni daemon start} gives a detached jcnid. */
    public static final String DAEMON_HEAP_LIMIT = "-Xmx128m";
    /** Crash-only on OutOfMemoryError: exit at once, never half alive; the service manager restarts it. */
    public static final String EXIT_ON_OOM = "-XX:+ExitOnOutOfMemoryError";
    /** When C1 compiles a plugin's methods: later than by default (why: {@link #jvmOptions}). */
    public static final String PLUGIN_COMPILE_THRESHOLD = "-XX:CompileThresholdScaling=10";

    /**
     * jcnid compiles its etcd client, the JDK's HTTP client its watches use, and the JDK's TLS and
     * crypto code after 20 calls instead of 200: a request runs them less than once (group commit
     * sends several allocations in one etcd request, one TLS record each way; a watch event is a
     * record or two), so at the default threshold the record layer and the cipher's setup were
     * still interpreted after a thousand allocations; compiled sooner, TLS cost cluster-ipam 4-10 % of
     * its allocations/s instead of 11-12 % (bench/multihost/README.md).
     * Only these packages: compiling everything sooner made a cold jcnid's first pods slower on a
     * loaded machine (docs/performance.md). {@code quiet}: the JVM would print each command on stdout.
     */
    public static final List<String> DAEMON_COMPILE_SOONER = List.of("-XX:CompileCommand=quiet",
            "-XX:CompileCommand=CompileThresholdScaling,io.jcni.etcd.*::*,0.1",
            "-XX:CompileCommand=CompileThresholdScaling,jdk.internal.net.http.*::*,0.1",
            "-XX:CompileCommand=CompileThresholdScaling,sun.security.*::*,0.1",
            "-XX:CompileCommand=CompileThresholdScaling,com.sun.crypto.provider.*::*,0.1",
            "-XX:CompileCommand=CompileThresholdScaling,javax.crypto.*::*,0.1");

    /**
     * The JVM options of {@code kind}; with {@code nativeLib}, where the JNI library is (else it is
     * extracted from the jar on first use).
     */
    public static List<String> jvmOptions(Kind kind, String nativeLib) {
        List<String> o = new ArrayList<>();
        // JVM warnings would corrupt the JSON on stdout: send them to stderr.
        o.add("-Xlog:disable");
        o.add("-Xlog:all=warning:stderr");
        // C1 only. A plugin lives for milliseconds. jcnid lives long, but its Java work is small next
        // to the kernel work it asks for: with full tiered compilation C2 was still compiling after
        // 2,000 requests, 27 % of jcnid's CPU under 50 concurrent pods; C1 alone cut jcnid's CPU per
        // pod 7.0 -> 5.3 ms (docs/performance.md).
        o.add("-XX:TieredStopAtLevel=1");
        if (kind == Kind.PLUGIN) {
            // A plugin call is over before most of what C1 would compile pays off; compiling it cost
            // a third of a standalone call's CPU time on a 2-core machine (242 -> 162 ms per ADD+DEL,
            // docs/performance.md), and a long loop is still compiled, only later.
            o.add(PLUGIN_COMPILE_THRESHOLD);
        } else {
            o.addAll(DAEMON_COMPILE_SOONER);
        }
        o.add("-XX:+UseSerialGC");
        if (kind == Kind.PLUGIN) {
            o.add("-Xss1m");
            o.add("-XX:-UsePerfData");
        } else {
            // A small fixed young generation: the JVM's default first heap is 1/64 of the RAM, and
            // every request's short-lived garbage touches more of its eden until the first
            // collection, so the RSS grew to ~250 MB on a 24 GB machine for nothing live
            // (bench/memory); young collections of 16 MB of almost all garbage take well under a millisecond.
            o.add("-Xms24m");
            o.add("-Xmn12m");
            // jcnid's whole RSS was 66 MB with 1,000 live attachments (heap, metaspace, code and
            // threads together); 128 MB of heap is twice that, and a quarter of it is the budget for
            // request bodies and answers held at once (daemon/README.md). Crash-only on
            // OutOfMemoryError: jcnid exits at once (never half alive), systemd restarts it
            // (Restart=on-failure), the shims run the standalone plugins meanwhile, and all state is
            // on disk. DaemonControl adds the same two flags when it starts a detached jcnid from a
            // JVM that lacks them (`jcni daemon start`: DaemonControl.childJvmFlags).
            o.add(DAEMON_HEAP_LIMIT);
            o.add(EXIT_ON_OOM);
        }
        o.add("--enable-native-access=ALL-UNNAMED");
        if (nativeLib != null) o.add("-Djcni.native.lib=" + nativeLib);
        return o;
    }

    /**
     * jcnid's shell prelude. systemd's socket activation passes the listening socket as fd 3
     * (LISTEN_FDS/LISTEN_PID, the pid being the launcher's, which exec keeps); the JVM can adopt an
     * inherited socket only on stdin. MALLOC_ARENA_MAX=2: glibc gives each thread that mallocs its
     * own arena (up to 8 per core), and jcnid's pooled namespace threads live long; with 1,000
     * attachments RSS was 124 MB, 113.5 with two arenas (bench/memory). A value set in the
     * environment (e.g. by a unit drop-in) is kept.
     */
    static final String DAEMON_PRELUDE = "if [ \"${LISTEN_FDS:-0}\" = 1 ] && [ \"${LISTEN_PID:-}\" = \"$$\" ]; then exec 0<&3 3<&-;"
            + " unset LISTEN_FDS LISTEN_PID LISTEN_FDNAMES; fi\n"
            + "MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2}; export MALLOC_ARENA_MAX\n";

    /**
     * A launcher: a shell script that execs {@code java} with {@code kind}'s options, using
     * {@code aotCache} when it is readable (a missing or unreadable cache would make the JVM print
     * errors on stderr; the package makes the cache after its files are in place).
     *
     * @param generator who wrote it (its second line: {@value #MARKER}: written by GENERATOR)
     * @param aotCache  null: no AOT cache
     * @param main      the main class and its arguments, as shell text (e.g. {@code io.jcni.cli.Main "$@"})
     */
    public static String script(Kind kind, String generator, String java, String classPath, String nativeLib, String aotCache,
            String main) {
        StringBuilder opts = new StringBuilder();
        for (String o : jvmOptions(kind, nativeLib)) opts.append(' ').append(shellQuote(o));
        String run = shellQuote(java) + opts + " ";
        String cp = "-cp " + shellQuote(classPath) + " " + main + "\n";
        StringBuilder s = new StringBuilder("#!/bin/sh\n# ").append(MARKER).append(": written by ").append(generator)
                .append("; do not edit.\n");
        if (kind == Kind.DAEMON) s.append(DAEMON_PRELUDE);
        if (aotCache != null) {
            s.append("if [ -r ").append(shellQuote(aotCache)).append(" ]; then exec ").append(run)
                    .append("-XX:AOTCache=").append(shellQuote(aotCache)).append(' ').append(cp.strip()).append("; fi\n");
        }
        s.append("exec ").append(run).append(cp);
        return s.toString();
    }

    /** {@code s} as one shell word: bare when it holds only safe characters, else in single quotes. */
    static String shellQuote(String s) {
        boolean safe = !s.isEmpty();
        for (int i = 0; i < s.length() && safe; i++) {
            char c = s.charAt(i);
            safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-_./:=+,%@".indexOf(c) >= 0;
        }
        return safe ? s : "'" + s.replace("'", "'\\''") + "'";
    }

    /**
     * For scripts/install.sh:
     * {@code options plugin|daemon NATIVE_LIB} prints the options on one line;
     * {@code script plugin|daemon GENERATOR JAVA CLASSPATH NATIVE_LIB AOT_CACHE MAIN} prints a launcher.
     * An empty NATIVE_LIB: the JNI library comes out of jcni-linux's jar; an empty AOT_CACHE: none (the bench scripts).
     */
    public static void main(String[] args) {
        if (args.length == 3 && args[0].equals("options")) {
            System.out.println(String.join(" ", jvmOptions(kind(args[1]), orNull(args[2]))));
        } else if (args.length == 8 && args[0].equals("script")) {
            System.out.print(script(kind(args[1]), args[2], args[3], args[4], orNull(args[5]), orNull(args[6]), args[7]));
        } else {
            System.err.println("usage: Launcher options plugin|daemon NATIVE_LIB | script plugin|daemon GENERATOR JAVA CLASSPATH NATIVE_LIB AOT_CACHE MAIN");
            System.exit(2);
        }
    }

    private static String orNull(String s) {
        return s.isEmpty() ? null : s;
    }

    private static Kind kind(String s) {
        return switch (s) {
            case "plugin" -> Kind.PLUGIN;
            case "daemon" -> Kind.DAEMON;
            default -> throw new IllegalArgumentException("not a launcher kind: " + s);
        };
    }
}
